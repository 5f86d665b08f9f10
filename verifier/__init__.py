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

import sys as _sys

from verifier.console import guard_if_console as _guard_if_console

_guard_if_console(_sys.argv)  # the console command handles Ctrl-C from its first instant (verifier/console.py)


from typing import TYPE_CHECKING

from verifier.lazy_names import lazy_names
from verifier.version import __version__

#: public name -> the module that defines it. Loaded on first use, so that a command (``verifier check``) pays
#: for the modules it needs, not for pandas, scipy.stats and the notebook API on every start.
_WHERE = {
    **dict.fromkeys(["Intruder", "PermutedPrivacy", "RecordCheck", "Release", "check_jointly", "check_record",
                     "intruder", "open_release", "permuted_privacy"], "verifier.api"),
    **dict.fromkeys(["InvalidInputError", "PrivacyWarning", "VerifierError"], "verifier.errors"),
    **dict.fromkeys(["IntruderReport", "RandomMatchDistribution", "SubjectReport", "intruder_test",
                     "random_match_distribution", "run_intruder", "subject_test"], "verifier.attacks.intruder"),
    **dict.fromkeys(["Table", "read_table"], "verifier.data.tables"),
    **dict.fromkeys(["DVPrivacyResult", "PermutedPrivacyReport", "RankSpace", "RecordDistance", "check_dv_privacy",
                     "compute_distances", "compute_permuted_privacy", "compute_record_distance",
                     "compute_window_spread"], "verifier.core.permutation"),
    **dict.fromkeys(["ReverseMappingResult", "block_ranks", "rank_deviation", "reverse_map"], "verifier.core.ranks"),
    "read_record": "verifier.releases.record",
    **dict.fromkeys(["Attribute", "Schema"], "verifier.data.schema"),
    "load_schema": "verifier.data.schema_file",
}

if TYPE_CHECKING:  # what a type checker and an IDE see
    from verifier.api import (  # noqa: F401
        Intruder, PermutedPrivacy, RecordCheck, Release, check_jointly, check_record, intruder, open_release,
        permuted_privacy,
    )


__getattr__, __dir__ = lazy_names(__name__, _WHERE)


__all__ = [
    "Intruder",
    "PermutedPrivacy",
    "RecordCheck",
    "Release",
    "check_jointly",
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
