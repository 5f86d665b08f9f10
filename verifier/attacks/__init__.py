"""What an attacker learns: the maximum-knowledge intruder and the random-match test (paper 003),
attribute disclosure risk (paper 000), the diversity checks of several sensitive attributes
(paper 002), generalized tables and their hierarchies (papers 001-002), and the protector's
assessment that gathers them.
"""

from verifier.attacks.assessment import Assessment, assess
from verifier.attacks.intruder import (
    IntruderReport,
    RandomMatchDistribution,
    SubjectReport,
    intruder_test,
    random_match_distribution,
    run_intruder,
    subject_test,
)

__all__ = [
    "Assessment", "IntruderReport", "RandomMatchDistribution", "SubjectReport", "assess", "intruder_test",
    "random_match_distribution", "run_intruder", "subject_test",
]
