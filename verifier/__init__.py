"""permuted-privacy verifier: every check a subject, an auditor or a protector can run.

The notebook API (``verifier.permuted_privacy``, ``verifier.intruder``,
``verifier.open_release``, ``verifier.check_record``) takes pandas
DataFrames; see docs/api.md. The rooms: ``core`` (the permutation core),
``attacks`` (intruder, disclosure, diversity), ``releases`` (verification,
audit, the subject's check), ``data`` (tables and schemas), and the front
ends ``frontend`` (the shared kit), ``cli``, ``tui`` and ``api``.

The verifier never imports the publisher, and nothing here imports a user
interface: a data subject installs nothing that anonymizes.
"""

from verifier.api import (
    Intruder,
    PermutedPrivacy,
    RecordCheck,
    Release,
    check_record,
    intruder,
    open_release,
    permuted_privacy,
)
from verifier.errors import InvalidInputError, PrivacyWarning, VerifierError
from verifier.attacks.intruder import (
    IntruderReport,
    RandomMatchDistribution,
    SubjectReport,
    intruder_test,
    random_match_distribution,
    run_intruder,
    subject_test,
)
from verifier.data.tables import Table, read_table
from verifier.core.permutation import (
    DVPrivacyResult,
    PermutedPrivacyReport,
    RankSpace,
    RecordDistance,
    check_dv_privacy,
    compute_distances,
    compute_permuted_privacy,
    compute_record_distance,
    compute_window_spread,
)
from verifier.core.ranks import ReverseMappingResult, block_ranks, rank_deviation, reverse_map
from verifier.releases.record import read_record
from verifier.data.schema import Attribute, Schema, load_schema

from verifier.version import __version__

__all__ = [
    "Intruder",
    "PermutedPrivacy",
    "RecordCheck",
    "Release",
    "check_record",
    "intruder",
    "open_release",
    "permuted_privacy",
    "__version__",
    "Attribute",
    "DVPrivacyResult",
    "IntruderReport",
    "InvalidInputError",
    "PermutedPrivacyReport",
    "PrivacyWarning",
    "RandomMatchDistribution",
    "RankSpace",
    "RecordDistance",
    "ReverseMappingResult",
    "Schema",
    "SubjectReport",
    "Table",
    "VerifierError",
    "block_ranks",
    "check_dv_privacy",
    "compute_distances",
    "compute_permuted_privacy",
    "compute_record_distance",
    "compute_window_spread",
    "intruder_test",
    "load_schema",
    "random_match_distribution",
    "rank_deviation",
    "read_record",
    "read_table",
    "reverse_map",
    "run_intruder",
    "subject_test",
]
