"""A release's standing in its log, as every front end shows it: logged where, cosigned by whom, one history.

:func:`log_standing` runs every check of issue 39, item 4 on a verified release: the proof's inclusion and its
checkpoint's signature (:mod:`~verifier.transparency.proof`), the witnesses' quorum of the subject's policy
(:mod:`~verifier.transparency.policy`), and one history with every checkpoint she has seen or given
(:mod:`~verifier.transparency.history`). The verdict reads :attr:`Standing.unwitnessed`: without a proof
cosigned by a quorum of witnesses, the release is what its publisher signed, never shown to be what everyone
sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from verifier.releases.verdict import NO_PROOF
from verifier.transparency.policy import Policy, Witnessed, check_checkpoint, log_only_policy, parse_policy
from verifier.transparency.proof import Logged, read_log_file, read_vkey, verify_proof

__all__ = ["Standing", "log_standing", "read_policy"]


@dataclass(frozen=True)
class Standing:
    """Where the log holds the release (None: no proof given), who cosigned its checkpoint, and what the history
    checks found."""

    logged: Logged | None = None
    witnessed: Witnessed | None = None
    history: tuple[str, ...] = ()
    newer_versions: tuple[int, ...] = ()

    @property
    def unwitnessed(self) -> str | None:
        """The sentence of the verdict's ``unwitnessed`` finding; None when a quorum of witnesses cosigned."""
        if self.logged is None:
            return NO_PROOF
        if self.witnessed is None or self.witnessed.quorum is None:
            return (f"This release is {self.logged.words()}, but your policy asks no witness to cosign: the log "
                    "could show you a history others do not see.")
        return None

    def words(self) -> str:
        if self.logged is None:
            return "no log proof given: this shows who signed the release, not that everyone is shown the same one"
        return self.logged.words() + (f", {self.witnessed.words()}" if self.witnessed is not None else "")

    def to_json(self) -> dict[str, Any] | None:
        if self.logged is None:
            return None
        witnessed = self.witnessed
        return {"origin": self.logged.checkpoint.origin, "index": exact(self.logged.index),
                "size": exact(self.logged.checkpoint.size),
                "witnesses": None if witnessed is None else {"cosigned": sorted(witnessed.cosigned),
                                                             "of": witnessed.of, "quorum": witnessed.quorum},
                "history": list(self.history), "newer_versions": list(self.newer_versions)}


#: the largest integer every JSON reader holds exactly (a 64-bit float's)
EXACT = 2**53


def exact(n: int) -> int | str:
    """A log's index or size for JSON: the number up to 2^53, its decimal text beyond (C2SP allows sizes to 2^63 - 1,
    which a browser's JSON reader, or the page, would round: RFC 7493, I-JSON)."""
    return n if n <= EXACT else str(n)


def read_policy(policy_path: str | None, log_key_path: str | None) -> Policy:
    """The subject's log policy from ``--log-policy FILE``, or the policy of a log's key alone (``--log-key``)."""
    if policy_path is not None:
        return parse_policy(read_log_file(policy_path, "key"), policy_path)
    origin, _, public = read_vkey(log_key_path, log_only=True)
    return log_only_policy(origin, public)


def log_standing(release, proof_path: str, policy: Policy, *, log: str | None = None, state: Path | None = None,
                 seen: Sequence[str] = ()) -> Standing:
    """Every check of the verified ``release``'s proof file under ``policy``; ``log`` the log's files, ``state``
    her state folder, ``seen`` the files of checkpoints she got elsewhere (``--checkpoint``)."""
    from verifier.transparency.history import check_history
    from verifier.transparency.note import parse_note

    raw = read_log_file(proof_path)
    logged = verify_proof(raw, release, policy.log_public, policy.origin, proof_path)
    witnessed = check_checkpoint(parse_note(logged.note, proof_path), policy, proof_path)
    others = [(path, read_log_file(path)) for path in seen]
    view = check_history(release, logged.checkpoint, logged.note, policy.origin, policy.log_public, log=log,
                         state=state, seen=others)
    return Standing(logged, witnessed, tuple(view.lines), tuple(view.newer_versions))
