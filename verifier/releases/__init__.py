"""Signed releases (SPEC section 9): verification, the auditor's recomputation of the claims,
the subject's check of her own record, and the record files she reads it from.

The names below are loaded on first use: a command that only verifies (or a module that needs one small part of
this package, such as the manifest's coherence rules) does not pay for the audit, the permutation kernels and
numba.
"""

from verifier.lazy_names import lazy_names

#: public name -> the module that defines it
_WHERE = {
    **dict.fromkeys(["AuditResult", "audit_release"], "verifier.releases.audit"),
    "read_record": "verifier.releases.record",
    "open_release": "verifier.releases.facts",
    **dict.fromkeys(["SubjectCheck", "check_record"], "verifier.releases.subject"),
    **dict.fromkeys(["ReleaseError", "TrustedKey", "VerifiedRelease", "load_public_key", "verify_release"],
                    "verifier.releases.verification"),
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE)


__all__ = [
    "AuditResult", "ReleaseError", "SubjectCheck", "TrustedKey", "VerifiedRelease", "audit_release", "check_record",
    "load_public_key", "open_release", "read_record", "verify_release",
]
