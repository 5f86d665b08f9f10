"""Signed releases (SPEC section 9): verification, the auditor's recomputation of the claims,
the subject's check of her own record, and the record files she reads it from.
"""

from verifier.releases.audit import AuditResult, audit_release
from verifier.releases.record import read_record
from verifier.releases.facts import open_release
from verifier.releases.subject import SubjectCheck, check_record
from verifier.releases.verification import ReleaseError, TrustedKey, VerifiedRelease, load_public_key, verify_release

__all__ = [
    "AuditResult", "ReleaseError", "SubjectCheck", "TrustedKey", "VerifiedRelease", "audit_release", "check_record",
    "load_public_key", "open_release", "read_record", "verify_release",
]
