"""A data subject's check of her own record against a verified release (SPEC sections 4, 5, 6 and 10.1).

The same computation serves ``verifier check`` and the TUI:

1. :func:`open_release` verifies the release with the key she trusts;
2. :func:`prepare` parses the verified data once;
3. :func:`check_record` computes her permutation distance, the released
   records that match her and their deviations, the window variances at her
   distance and at the publisher's claimed D against the claimed v, and her
   attribute disclosure risk per sensitive attribute;
4. :func:`random_match` runs her random-match test (long: the TUI runs it in
   a worker, with progress and cancel).

Her record stays in memory. Nothing here writes, logs or prints it, and the
objects that hold it do not show it in their ``repr`` (a traceback with
locals must not reveal it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Callable, Sequence

import numpy as np

from verifier.text import figure, markdown, number, plural
from verifier.errors import InvalidInputError, UsageError
from verifier.attacks.classes import PublishedCells
from verifier.attacks.mask_model import MaskModel, mask_model
from verifier.attacks.intruder import SubjectReport, subject_test
from verifier.core.permutation import RankSpace, RecordDistance, SingleRecord, SpaceRecord, spread_kind
from verifier.releases.exposure import her_disclosure
from verifier.releases.facts import MODEL_WORDS, p_value_words, release_facts, signed_contact
from verifier.releases.family import NO_RANKS
from verifier.releases.group_check import GroupCheck, check_group
from verifier.releases.plain_words import plain_markdown, plain_words
from verifier.releases.policy import Policy, default_policy
from verifier.releases.verdict import (NO_PROOF, HerFigures, Verdict, claims_line, disclosure_breaches, disclosure_line,
                                      policy_verdict, target_breaches, within_error_lines)
from verifier.releases.verification import ReleaseError, VerifiedRelease
from verifier.data.formula_cells import FormulaCells, formula_cells_in_keys, formula_cells_in_text
from verifier.data.schema import Schema

__all__ = ["Prepared", "prepare", "claimed_dv", "SubjectCheck", "check_record", "random_match"]


@dataclass(frozen=True, eq=False)
class Prepared:
    """The verified release, parsed once: its schema, rank keys and column kinds.

    The full :class:`RankSpace` (one sort per column) is built only when the
    random-match test first needs it; her own report does not.
    """

    release: VerifiedRelease
    schema: Schema
    values: np.ndarray
    kinds: list[str]
    published: PublishedCells | None = None
    """A generalized release's cells (its ``values`` are then empty: the cells have no ranks)."""
    ranked: RankSpace | None = None
    """The rank space of ``values`` when the caller built it already (the publisher's claims did)."""

    @property
    def ranks_apply(self) -> bool:
        return self.published is None

    @cached_property
    def space(self) -> RankSpace:
        return self.ranked if self.ranked is not None else RankSpace(self.values, self.kinds)

    @cached_property
    def masks(self) -> MaskModel | None:
        """A two-step release's masks' model (:mod:`verifier.attacks.mask_model`), None for any other."""
        if self.published is None:
            return None
        return mask_model(self.published, self.release.methods, self.release.claims, self.release.hierarchies)

    @cached_property
    def formula_cells(self) -> FormulaCells:
        """Text cells a spreadsheet would run as formulas (docs/release-format.md, section 1.4)."""
        if self.published is not None:
            return formula_cells_in_text(self.schema, self.published.text)
        return formula_cells_in_keys(self.schema, self.values)

    @property
    def n_records(self) -> int:
        return self.published.n_records if self.published is not None else int(self.values.shape[0])

    @property
    def spread_kinds(self) -> list[str]:
        return [spread_kind(k) for k in self.kinds]



def prepare(release: VerifiedRelease) -> Prepared:
    """Parse the verified bytes; a release whose signed schema or data cannot be read fails closed."""
    try:
        schema = release.schema()  # the signed schema must parse on its own, not only as the table's
        if release.family == "generalized":
            published = release.published()
            kinds = [a.kind for a in schema.attributes]
            return Prepared(release, schema, np.empty((0, len(kinds))), kinds, published)
        table = release.table()
    except InvalidInputError as exc:
        raise ReleaseError(f"the signed schema or data cannot be read: {exc.message}", path=release.path,
                           reason="DATA_MALFORMED") from None
    return Prepared(release, table.schema, table.values, list(table.kinds))


def claimed_dv(release: VerifiedRelease) -> tuple[int | None, list[float] | None]:
    """The publisher's claimed (D, v) of permuted privacy, each None where the manifest gives none usable."""
    pp = (release.claims or {}).get("permuted_privacy") or {}
    d, v = pp.get("distance"), pp.get("variances")
    d = d if isinstance(d, int) and not isinstance(d, bool) and d >= 0 else None
    if not (isinstance(v, list) and all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in v)):
        v = None
    return d, v


@dataclass(frozen=True, eq=False, repr=False)
class SubjectCheck:
    """Her results. ``repr`` never shows her record."""

    prepared: Prepared
    record: np.ndarray
    view: SingleRecord | SpaceRecord
    claimed_distance: int | None
    claimed_v: list[float] | None
    spread_at_claimed: np.ndarray | None
    disclosure: dict[str, Any]

    ranks_apply = True

    def __repr__(self) -> str:
        return f"SubjectCheck(distance={self.result.distance}, matches={self.result.matches.size})"

    @cached_property
    def spread_at_own(self) -> np.ndarray:
        """The window variances around her record at her own distance (her report shows them; her level does not
        read them, so counting every record's level never computes them)."""
        return self.view.spread_at(self.view.result.distance)

    @property
    def result(self) -> RecordDistance:
        """Her distance, matches, deviations and query blocks."""
        return self.view.result

    @property
    def distance(self) -> int:
        return self.result.distance

    @property
    def names(self) -> list[str]:
        return self.prepared.schema.names

    def spread_at(self, d: int) -> np.ndarray:
        return self.view.spread_at(d)

    def claim_holds(self) -> bool | None:
        """Whether her record meets the publisher's claimed (D, v): d >= D and var_j at D >= v_j."""
        if self.claimed_distance is None:
            return None
        ok = self.distance >= self.claimed_distance
        if self.claimed_v is not None and self.spread_at_claimed is not None and len(self.claimed_v) == len(self.names):
            ok &= all(s >= v - 1e-9 * max(1.0, abs(v)) for s, v in zip(self.spread_at_claimed, self.claimed_v))
        return bool(ok)

    def thresholds_hold(self, d: int, v: Sequence[float]) -> tuple[bool, np.ndarray]:
        """Her own (d, v): her distance at least d and every window variance at d above v_j (Def. 1)."""
        spread = self.spread_at(d)
        return bool(self.distance >= d and all(s > t for s, t in zip(spread, v))), spread

    @property
    def unchanged(self) -> bool:
        """A released record equals hers on every attribute, and one of them is numeric (on categories alone
        many people share every value, which her disclosure risks already measure)."""
        if self.distance != 0 or "numeric" not in self.prepared.kinds:
            return False
        return bool(np.all(self.prepared.values[self.result.matches] == self.record, axis=1).any())

    def figures(self, random: SubjectReport | None = None) -> HerFigures:
        """What the verdict policy reads of her record: her distance, p-value, risks with their base rates, and
        the claims and targets her figures break."""
        release = self.prepared.release
        linked = random is not None and bool(random.confidently_linked)
        broken = (self.broken_claims() + disclosure_breaches(self.disclosure, release.claims)
                  + target_breaches(release.predicate.get("targets"), risks=self.disclosure, distance=self.distance,
                                    linked=linked))
        return HerFigures(self.disclosure, distance=self.distance,
                          p_value=None if random is None else float(random.p_value), unchanged=self.unchanged,
                          broken=broken)

    def broken_claims(self) -> list[str]:
        """Her figures that break the publisher's claimed (D, v)."""
        out = []
        if self.claimed_distance is not None and self.distance < self.claimed_distance:
            out.append(f"Your closest released record is {self.distance} ranks from yours; the publisher claims "
                       f"every record is at least {self.claimed_distance} ranks from its closest match.")
        if self.claim_holds() is False and self.distance >= (self.claimed_distance or 0):
            out.append(f"The spread of the released values around your record at D = {self.claimed_distance} is "
                       "below the publisher's claimed v on at least one attribute.")
        return out

    def verdict(self, random: SubjectReport | None = None, policy: Policy | None = None, *,
                unwitnessed: str | None = NO_PROOF) -> Verdict:
        """Her level and headline under the verdict policy (the default one without ``policy``), every finding,
        and the sentences of her report; ``unwitnessed`` the sentence of her log notice (None: witnessed)."""
        n = self.result.matches.size
        claimed = self.claimed_distance is not None or bool(self.prepared.release.claims.get("attribute_disclosure"))
        details = [claims_line(self.broken_claims() + disclosure_breaches(self.disclosure, self.prepared.release.claims),
                               claimed=claimed)]
        details += within_error_lines(self.disclosure, self.prepared.release.claims,
                                      self.prepared.release.predicate.get("targets"))
        if self.distance == 0:
            details.append(f"{plural(n, 'released record')} {'sits' if n == 1 else 'sit'} at exactly your rank on "
                           "every attribute: your values were not moved among the others.")
        else:
            closest = ("Your closest released record is" if n == 1 else f"Your {n} closest released records are")
            details.append(f"{closest} {plural(self.distance, 'rank')} away from yours on {'its' if n == 1 else 'their'} "
                           "farthest attribute: your values were mixed among others.")
        details += [disclosure_line(name, r, MODEL_WORDS.get(r["mode"], r["mode"])) for name, r in self.disclosure.items()]
        if random is not None:
            details.append(p_value_words(random.p_value, random.alpha).capitalize() + ".")
        figures = replace(self.figures(random), unwitnessed=unwitnessed)
        return policy_verdict(policy or default_policy(), figures, details=details)

    def to_json(self, random: SubjectReport | None = None, policy: Policy | None = None, *,
                unwitnessed: str | None = NO_PROOF) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return float(x) if math.isfinite(float(x)) else None

        out: dict[str, Any] = {
            "verified": True,
            "release": self.prepared.release.path,
            "fingerprint": self.prepared.release.key.fingerprint,
            "dataset_id": self.prepared.release.dataset_id,
            "release_version": self.prepared.release.release_version,
            "attributes": self.names,
            "distance": self.distance,
            "matches": (self.result.matches + 1).tolist(),
            "deviations": self.result.deviations.tolist(),
            "variances": [num(v) for v in self.spread_at_own],
            "spread_kinds": self.prepared.spread_kinds,
            "claimed": {"distance": self.claimed_distance, "variances": self.claimed_v},
            "variances_at_claimed_distance": None if self.spread_at_claimed is None
            else [num(v) for v in self.spread_at_claimed],
            "claim_holds": self.claim_holds(),
            "attribute_disclosure": self.disclosure,
            "formula_like_cells": self.prepared.formula_cells.count,
            "p_value": None,
            "verdict": self.verdict(random, policy, unwitnessed=unwitnessed).to_json(),
        }
        if random is not None:
            out.update(p_value=random.p_value, p_value_interval=[random.p_value_low, random.p_value_high],
                       confidently_linked=random.confidently_linked, alpha=random.alpha,
                       random_method=random.random.method, random_records=random.random.total,
                       # distances no random record reached are left out: at 1e6 records they run to 1e5+
                       random_distribution={str(d): float(v) for d, v in enumerate(random.random.pmf) if v > 0})
        out["contact"] = signed_contact(self.prepared.release)
        out["signed_levels"] = self.prepared.release.claims.get("policy_levels")
        out["plain"] = plain_words(out)
        return out


    def to_markdown(self, random: SubjectReport | None = None, policy: Policy | None = None, *,
                    unwitnessed: str | None = NO_PROOF) -> str:
        """Her report as Markdown: the verified release, the verdict, every figure (SPEC section 10.1, item 5)."""
        import json

        data = self.to_json(random, policy, unwitnessed=unwitnessed)
        lines = ["# My record in a verified release", "", "Written at my request by `verifier`; it holds figures about "
                 "my record, not the record itself.", "", "## The release", "", "| | |", "| --- | --- |"]
        lines += [f"| {markdown(k.strip())} | {markdown(v)} |" for k, v in release_facts(self.prepared.release)]
        lines += ["", *plain_markdown(data)]
        lines += ["", f"## Permutation distance: {self.distance}", "",
                  f"{plural(len(data['matches']), 'released record')} {'matches' if len(data['matches']) == 1 else 'match'}; "
                  "rank deviations per attribute:", "",
                  "| match | " + " | ".join(markdown(json.dumps(n)) for n in self.names) + " |",
                  "| --- |" + " --- |" * len(self.names)]
        lines += [f"| {m} | " + " | ".join(str(t) for t in dev) + " |"
                  for m, dev in zip(data["matches"], data["deviations"])]
        claimed = data["claimed"]
        lines += ["", "## Spread around my record", "",
                  f"| attribute | kind | at my d = {self.distance} | at claimed D = {claimed['distance']} | claimed v |",
                  "| --- | --- | --- | --- | --- |"]
        for j, n in enumerate(self.names):
            at_d = data["variances_at_claimed_distance"][j] if data["variances_at_claimed_distance"] else None
            v = claimed["variances"][j] if claimed["variances"] and j < len(claimed["variances"]) else None
            lines.append(f"| {markdown(json.dumps(n))} | {data['spread_kinds'][j]} | {figure(data['variances'][j])} | "
                         f"{figure(at_d)} | {figure(v)} |")
        if data["attribute_disclosure"]:
            lines += ["", "## Attribute disclosure", "",
                      "| sensitive attribute | risk | base rate | beta | delta | candidates | how |",
                      "| --- | --- | --- | --- | --- | --- | --- |"]
            lines += [f"| {markdown(json.dumps(n))} | {figure(r['risk'])} | {figure(r['prior'])} | {figure(r['beta'])} | "
                      f"{figure(r['delta'])} | {r['candidates']} | {r['mode']} |"
                      for n, r in data["attribute_disclosure"].items()]
        lines += ["", "## Random-match test", ""]
        if random is None:
            lines.append("Not run.")
        else:
            lines.append(f"p-value F_rand({self.distance}) = {number(random.p_value)} at alpha {random.alpha:g} "
                         f"({random.random.method.replace('_', ' ')}, {random.random.total} random records): "
                         f"{p_value_words(random.p_value, random.alpha)}.")
        return "\n".join(lines) + "\n"


def check_record(prepared: Prepared, record: np.ndarray, *, whole_space: bool = False) -> SubjectCheck | GroupCheck:
    """Everything about her record but the random-match test (SPEC sections 4 and 6).

    ``whole_space`` measures her record in ``prepared.space`` (built once,
    for the random-match test that will follow) instead of by linear
    selection; the results are the same to the last bit. In a generalized
    release: her equivalence class and her risks in it
    (:class:`~verifier.releases.group_check.GroupCheck`), as ranks do not apply.
    """
    record = np.asarray(record, dtype=np.float64)
    if not prepared.ranks_apply:
        return check_group(prepared, record)
    view: SingleRecord | SpaceRecord = (SpaceRecord(prepared.space, record) if whole_space
                                        else SingleRecord(prepared.values, prepared.kinds, record))
    d, v = claimed_dv(prepared.release)
    at_claimed = view.spread_at(d) if d is not None else None
    disclosure = her_disclosure(prepared.release.methods, prepared.values, prepared.schema, record,
                                claims=prepared.release.claims)
    return SubjectCheck(prepared, record, view, d, v, at_claimed, disclosure)


def random_match(prepared: Prepared, check: SubjectCheck, *, alpha: float = 0.01, samples: int = 10_000,
                 seed: int = 0, progress: Callable[[int, int], None] | None = None) -> SubjectReport:
    """Her random-match test (SPEC section 5, subject's version). ``progress`` may raise to cancel.

    Refused (exit 2) for a generalized release: its cells have no ranks.
    """
    if not prepared.ranks_apply:
        raise UsageError(f"the random-match test does not apply: {NO_RANKS}",
                         path=prepared.release.path, reason="NOT_APPLICABLE")
    return subject_test(prepared.space, check.record, alpha=alpha, samples=samples, random_state=seed,
                        progress=progress, mine=check.result)
