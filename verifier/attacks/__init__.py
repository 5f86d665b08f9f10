"""What an attacker learns: the maximum-knowledge intruder and the random-match test (paper 003),
attribute disclosure risk (paper 000), the diversity checks of several sensitive attributes
(paper 002), generalized tables and their hierarchies (papers 001-002), and the protector's
assessment that gathers them.

The names below are loaded on first use, so that a module needing one small part of this package does not load
the permutation kernels and numba.
"""

from verifier.lazy_names import lazy_names

#: public name -> the module that defines it
_WHERE = {
    **dict.fromkeys(["Assessment", "assess"], "verifier.attacks.assessment"),
    **dict.fromkeys(["IntruderReport", "RandomMatchDistribution", "SubjectReport", "intruder_test",
                     "random_match_distribution", "run_intruder", "subject_test"], "verifier.attacks.intruder"),
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE)


__all__ = [
    "Assessment", "IntruderReport", "RandomMatchDistribution", "SubjectReport", "assess", "intruder_test",
    "random_match_distribution", "run_intruder", "subject_test",
]
