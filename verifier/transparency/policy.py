"""A log policy: which log a subject trusts, which witnesses, and how many of them must cosign (issue 39).

A policy is UTF-8 text, one statement per line (``#`` starts a comment; words are apart by spaces or tabs; no
other control character), in the shape of the witness policies
of Go's transparency clients::

    log stats.example/releases+1c5ef2b0+AUq...                # the log's verifier key; its name is the origin
    witness council council.example/witness+5a1d...+BHk...    # a label, the witness's verifier key (type 0x04)
    witness library library.example/w+90ce...+BN3...
    witness dpa dpa.example/witness+e02f...+BCs...
    group two-of-three 2 council library dpa                # N of the members (or all, or any)
    quorum two-of-three                                      # a witness or a group; none: no witness needed

A group's members are witnesses or groups named above it. A checkpoint meets the policy when the log signed it
and the quorum is met by witnesses whose cosignatures verify; a cosignature from a witness of the policy that
does not verify rejects the checkpoint, one from a key the policy does not name is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from verifier.errors import InvalidInputError
from verifier.releases.listed_files import ReleaseError, fail
from verifier.transparency.cosignature import mldsa_supported, verify_cosignature
from verifier.transparency.note import (COSIGNATURE_TYPE, ED25519_TYPE, MLDSA44_COSIGNATURE_TYPE, Note, parse_vkey,
                                        verify_signature)

__all__ = ["Policy", "Witnessed", "check_checkpoint", "log_only_policy", "parse_policy"]

MAX_POLICY_BYTES = 1 << 16


@dataclass(frozen=True)
class Policy:
    """The log's origin and key, the witnesses by label as ``(name, public key)``, the groups as ``(threshold,
    members)``, and the quorum's label (None: no witness needed)."""

    origin: str
    log_public: bytes
    witnesses: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    groups: dict[str, tuple[int, tuple[str, ...]]] = field(default_factory=dict)
    quorum: str | None = None

    def met(self, cosigned: set[str], label: str | None = None) -> bool:
        """Whether the witnesses ``cosigned`` meet the quorum (or the group or witness ``label``)."""
        label = self.quorum if label is None else label
        if label is None:
            return True
        if label in self.witnesses:
            return label in cosigned
        threshold, members = self.groups[label]
        return sum(self.met(cosigned, m) for m in members) >= threshold


@dataclass(frozen=True)
class Witnessed:
    """The witnesses of a policy that cosigned a checkpoint, and when (label to seconds since the epoch)."""

    cosigned: dict[str, int]
    of: int
    quorum: str | None

    def words(self) -> str:
        if not self.of:
            return "cosigned by no witness (the policy names none)"
        return f"cosigned by {len(self.cosigned)} of {self.of} witness{'es' if self.of > 1 else ''}"


def _bad(path: str, line: int, message: str) -> InvalidInputError:
    return InvalidInputError(f"line {line}: {message}", path=path, reason="POLICY_INVALID")


def _witness(policy: Policy, words: list[str], path: str, n: int) -> None:
    if len(words) not in (3, 4):
        raise _bad(path, n, "a witness line is 'witness LABEL VERIFIER-KEY [URL]'")
    name, kind, public = _vkey(words[2], path, n)
    if kind not in (COSIGNATURE_TYPE, MLDSA44_COSIGNATURE_TYPE):
        raise _bad(path, n, f"the key of witness {words[1]} is a log's (type 0x01), not a cosigner's (0x04 or 0x06)")
    if kind == MLDSA44_COSIGNATURE_TYPE and not mldsa_supported():
        raise _bad(path, n, f"the witness {words[1]} cosigns with ML-DSA-44, which this installation's cryptography "
                   "cannot verify: install a cryptography release with ML-DSA, or name its Ed25519 key")
    policy.witnesses[words[1]] = (name, public)


def _group(policy: Policy, words: list[str], path: str, n: int) -> None:
    members = tuple(words[3:])
    if len(words) < 4:
        raise _bad(path, n, "a group line is 'group LABEL N|all|any MEMBER...'")
    for member in members:
        if member not in policy.witnesses and member not in policy.groups:
            raise _bad(path, n, f"{member!r} is no witness or group named above")
    if len(set(members)) != len(members):
        raise _bad(path, n, "a group names each member once")
    count = {"all": len(members), "any": 1}.get(words[2])
    if count is None and not (words[2].isascii() and words[2].isdigit() and 1 <= int(words[2]) <= len(members)):
        raise _bad(path, n, f"a group's threshold is all, any or a number from 1 to {len(members)}")
    policy.groups[words[1]] = (count or int(words[2]), members)


def _vkey(text: str, path: str, n: int) -> tuple[str, int, bytes]:
    try:
        return parse_vkey(text, path)
    except ReleaseError as exc:  # LOG_KEY_INVALID, said with its line
        raise _bad(path, n, exc.message) from None


def parse_policy(raw: bytes, path: str) -> Policy:
    """A policy file's statements, strictly: one log, labels defined once, a quorum that names one of them."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError("a policy is UTF-8 text", path=path, reason="POLICY_INVALID") from None
    log, quorum, policy = None, None, None
    for n, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if any(c < " " and c != "\t" or c == "\x7f" for c in line):
            raise _bad(path, n, "a policy line holds no control character but a tab")
        words = [w for w in re.split(r"[ \t]+", line.split("#", 1)[0]) if w]
        if not words:
            continue
        if words[0] == "log":
            if log is not None or len(words) != 2:
                raise _bad(path, n, "a policy has one log line, 'log VERIFIER-KEY'")
            name, kind, public = _vkey(words[1], path, n)
            if kind != ED25519_TYPE:
                raise _bad(path, n, "the log's key signs with Ed25519 (type 0x01); this is a witness's")
            log, policy = (name, public), Policy(name, public)
        elif policy is None:
            raise _bad(path, n, "the log line comes first")
        elif words[0] in ("witness", "group"):
            if len(words) > 1 and (words[1] in policy.witnesses or words[1] in policy.groups or words[1] == "none"):
                raise _bad(path, n, f"the label {words[1]!r} is taken")
            (_witness if words[0] == "witness" else _group)(policy, words, path, n)
        elif words[0] == "quorum":
            if quorum is not None or len(words) != 2 or not (words[1] == "none" or words[1] in policy.witnesses
                                                              or words[1] in policy.groups):
                raise _bad(path, n, "a policy has one quorum line naming a witness or group above it, or none")
            quorum = words[1]
        else:
            raise _bad(path, n, f"{words[0]!r} is not a statement: log, witness, group or quorum")
    if policy is None or quorum is None:
        raise InvalidInputError("a policy names its log and its quorum (quorum none when no witness is needed)",
                                path=path, reason="POLICY_INVALID")
    return Policy(policy.origin, policy.log_public, policy.witnesses, policy.groups,
                  None if quorum == "none" else quorum)


def log_only_policy(origin: str, public_raw: bytes) -> Policy:
    """The policy of a log's key alone: no witness is needed, and none is counted."""
    return Policy(origin, public_raw)


def check_checkpoint(note: Note, policy: Policy, where: str) -> Witnessed:
    """Hold a checkpoint's note to the policy: the log's signature (``LOG_SIGNATURE``), then every cosignature of
    a witness the policy names, and the quorum (``WITNESS_QUORUM``)."""
    if verify_signature(note, policy.origin, policy.log_public, where, kind=ED25519_TYPE) is None:
        raise fail(where, "LOG_SIGNATURE", f"the checkpoint carries no signature of the log's key ({policy.origin})")
    cosigned = {}
    for label, (name, public) in policy.witnesses.items():
        when = verify_cosignature(note, name, public, where)
        if when is not None:
            cosigned[label] = when
    witnessed = Witnessed(cosigned, len(policy.witnesses), policy.quorum)
    if not policy.met(set(cosigned)):
        raise fail(where, "WITNESS_QUORUM", f"the checkpoint is {witnessed.words()}; the policy's quorum "
                   f"{policy.quorum!r} is not met: the log may show you a history others do not see")
    return witnessed
