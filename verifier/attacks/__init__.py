"""What an attacker learns: the maximum-knowledge intruder and the random-match test (paper 003),
attribute disclosure risk (paper 000), the diversity checks of several sensitive attributes
(paper 002), generalized tables and their hierarchies (papers 001-002), and the protector's
assessment that gathers them.

The names below are loaded on first use, so that a module needing one small part of this package does not load
the permutation kernels and numba.
"""

from importlib import import_module

#: public name -> the module that defines it
_WHERE = {
    **dict.fromkeys(["Assessment", "assess"], "verifier.attacks.assessment"),
    **dict.fromkeys(["IntruderReport", "RandomMatchDistribution", "SubjectReport", "intruder_test",
                     "random_match_distribution", "run_intruder", "subject_test"], "verifier.attacks.intruder"),
}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'verifier.attacks' has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    "Assessment", "IntruderReport", "RandomMatchDistribution", "SubjectReport", "assess", "intruder_test",
    "random_match_distribution", "run_intruder", "subject_test",
]
