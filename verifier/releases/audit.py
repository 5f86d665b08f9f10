"""The auditor: every figure of a verified release's manifest, recomputed or said why not (SPEC 9, 13).

Transparency (paper 003, Def. 4) means an auditor can check everything but
the seed. Every leaf of ``predicate.claims`` and ``predicate.utility``, and
every parameter a method derived from the data, ends in exactly one of three
lists:

- ``checks``: recomputed, from the release alone where the figure allows it
  (k, the released means, variances and correlations, a generalized release's
  classes and group risks, randomized response's estimated risk), otherwise
  with the original table (the data-set (D, v), the intruder's figures with
  the manifest's public seed, the risks of the family's model, the original's
  figures);
- ``unchecked``, each with its reason: it needs the secret pairing of
  released and original rows (``protector_only``, the distortion, the rank
  correlation under the true pairing), the original table the auditor did
  not give, or a rerun of the method (a derived parameter, which
  ``publisher replay`` tests);
- ``settings``: how a test was run (its alpha, number of random records and
  public seed), used to rerun it.

Each family's own target is checked on the recomputed figures too (a risk
above 1/l, a diversity check that fails at the method's alpha). A claim is
true when the recomputed figure equals it: integers, strings and booleans
exactly, floats to a relative 1e-9 or an absolute 1e-12 (the same computation on
the same bytes, up to summation order).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from verifier.attacks.assessment import Searches, assess, smallest_class
from verifier.attacks.counterfeits import COUNTERFEITING, MOST_PAIRS, counterfeits_fit
from verifier.attacks.reidentification import table_risk
from verifier.attacks.generalized import assess_generalized
from verifier.attacks.link_rows import link_columns
from verifier.core.permutation import RankSpace, spread_kind
from verifier.core.record_rows import distance_columns
from verifier.data.tables import Table
from verifier.errors import InvalidInputError
from verifier.releases.external_step import external_checks, not_replayable
from verifier.releases.family import EXTERNAL, derived_parameters
from verifier.releases.composition import composition_claim
from verifier.releases.links import Links
from verifier.releases.levels import record_levels
from verifier.releases.policy import Policy, default_policy
from verifier.releases.subject import prepare
from verifier.attacks.mask_model import mask_model
from verifier.releases.recompute import family_disclosure, group_release_claims, sensitive_marginals
from verifier.releases.targets import joint_misses, target_misses
from verifier.releases.verdict import disclosure_breaches
from verifier.releases.verification import ReleaseError, VerifiedRelease

__all__ = ["ClaimCheck", "AuditResult", "audit_release", "audit_rows", "figure_paths", "derived_figures", "PAIRING",
           "NEEDS_ORIGINAL", "NEEDS_EARLIER", "DERIVED"]

#: figures a later version of the toolkit added to a claim: checked where a manifest has them
ADDED_LATER = frozenset({"certain_share"})
_REL = 1e-9
_ABS = 1e-12  # a correlation change of 0 against 1e-17: the same figure, summed in another order
PAIRING = "needs the secret pairing of released and original rows"
NEEDS_ORIGINAL = "needs the original table (--original)"
NEEDS_EARLIER = ("needs the original with its linking column and the earlier releases with their links files "
                 "(--original X.csv --previous DIR)")
NEEDS_WEIGHTS = "needs the original's sampling weights (its weight column, in --original)"
DERIVED = ("a parameter the publisher derived from the original table; 'publisher replay' tests whether the "
           "release is what the published method makes with it")


@dataclass(frozen=True)
class ClaimCheck:
    """One claim: what the manifest says, what the data give, and whether they agree."""

    name: str
    claimed: Any
    computed: Any
    ok: bool
    note: str = ""


@dataclass(frozen=True, eq=False)
class AuditResult:
    release: VerifiedRelease
    checks: list[ClaimCheck]
    unchecked: dict[str, str]
    """Figure path -> why it was not recomputed."""
    with_original: bool
    figures: dict[str, Any] = field(default_factory=dict)
    settings: list[str] = field(default_factory=list)
    """Figure paths that say how a test was run; used to rerun it."""

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "release": self.release.path,
            "fingerprint": self.release.key.fingerprint,
            "dataset_id": self.release.dataset_id,
            "release_version": self.release.release_version,
            "with_original": self.with_original,
            "passed": self.passed,
            "checks": [{"claim": c.name, "claimed": c.claimed, "computed": c.computed, "ok": c.ok,
                        **({"note": c.note} if c.note else {})} for c in self.checks],
            "unchecked": [{"figure": k, "reason": v} for k, v in self.unchecked.items()],
            "settings": self.settings,
        }


def figure_paths(node: Any, prefix: str = "") -> Iterator[str]:
    """Every leaf of a manifest section as a dotted path (a list is one leaf; an empty section has none)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from figure_paths(value, f"{prefix}.{key}" if prefix else str(key))
    elif prefix:
        yield prefix


def derived_figures(methods: list[Any]) -> Iterator[str]:
    """The leaves of the methods' parameters that the publisher computed from the data (``methods.<i>.parameters...``)."""
    for i, step in enumerate(methods):
        for name in derived_parameters(step):
            yield from figure_paths(step["parameters"][name], f"methods.{i}.parameters.{name}")


def _close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        return int(a) == int(b)
    try:
        return math.isclose(float(a), float(b), rel_tol=_REL, abs_tol=_ABS)
    except (TypeError, ValueError, OverflowError):  # a claim of the wrong type is simply false
        return False


def _direction(name: str, claimed: Any, computed: Any) -> str:
    if claimed is None or computed is None or claimed == computed:
        return ""
    try:
        more = float(claimed) > float(computed)
    except (TypeError, ValueError):
        return ""
    # a protection figure claimed higher, or a risk figure claimed lower, than the data give
    protection = name in ("permuted_privacy.distance", "k")
    risk = name == "intruder.confidently_linked_share" or name.startswith("attribute_disclosure.")
    if (protection and more) or (risk and not more):
        return "the manifest overstates the protection"
    return "the manifest claims more than the data give" if more else "the manifest claims less than the data give"


class _Ledger:
    """Where every figure of the manifest ends: checked, unchecked with a reason, or a setting."""

    def __init__(self, release: VerifiedRelease, last: Callable[["_Ledger"], None] | None = None):
        self.release = release
        self._last = last
        """Checks made after the family's own, before the result (the records' levels, which read its claims)."""
        self.checks: list[ClaimCheck] = []
        self.unchecked: dict[str, str] = {}
        self.settings: list[str] = []
        self.space: RankSpace | None = None
        """The release's rank space once the claims' search ran in it (every record's level searches it again)."""

    def claimed(self, path: str) -> Any:
        node: Any = {"utility": self.release.predicate.get("utility") or {}, **(self.release.claims or {})}
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return node

    def check(self, path: str, computed: Any) -> None:
        claimed = self.claimed(path)
        if isinstance(claimed, list) or isinstance(computed, list):
            ok = (isinstance(claimed, list) and isinstance(computed, list) and len(claimed) == len(computed)
                  and all(_close_nested(a, b) for a, b in zip(claimed, computed)))
        else:
            ok = _close(claimed, computed)
        self.checks.append(ClaimCheck(path, claimed, computed, ok, "" if ok else _direction(path, claimed, computed)))

    def tree(self, path: str, computed: Any) -> None:
        """Check every leaf of a recomputed section, and every leaf the manifest has there besides."""
        if isinstance(computed, dict):
            claimed = self.claimed(path)
            claimed = claimed if isinstance(claimed, dict) else {}
            done = {c.name for c in self.checks} | set(self.unchecked)
            keys = [k for k in computed if k in claimed or k not in ADDED_LATER]
            keys += [k for k in claimed if k not in computed and not _reached(f"{path}.{k}", done)]
            for key in keys:
                self.tree(f"{path}.{key}", computed.get(key))
        else:
            self.check(path, computed)

    def section(self, path: str, computed: Any) -> None:
        """:meth:`tree` for a section a later release format added: checked where the manifest has it."""
        if self.claimed(path) is not None:
            self.tree(path, computed)

    def skip(self, path: str, reason: str) -> None:
        """List every leaf under ``path`` not already checked or a setting as unchecked, for ``reason``."""
        done = {c.name for c in self.checks} | set(self.settings)
        if self.claimed(path) is None:  # not in the manifest: nothing was claimed there
            return
        for leaf in figure_paths(self.claimed(path), path):
            if leaf not in done:
                self.unchecked.setdefault(leaf, reason)

    def setting(self, path: str) -> None:
        if self.claimed(path) is not None:
            self.settings.append(path)

    def fail(self, name: str, note: str) -> None:
        self.checks.append(ClaimCheck(name, None, None, False, note))

    def result(self, with_original: bool, figures: dict[str, Any]) -> AuditResult:
        """Whatever figure no rule reached is listed, never dropped: a newer manifest field, unchecked."""
        if self._last is not None:
            self._last, last = None, self._last
            last(self)
        seen = {c.name for c in self.checks} | set(self.unchecked) | set(self.settings)
        for section in (self.release.claims or {}), {"utility": self.release.predicate.get("utility") or {}}:
            for leaf in figure_paths(section):
                if leaf not in seen and not any(leaf.startswith(s + ".") for s in seen):
                    self.unchecked[leaf] = "not recomputed by this version of the verifier"
        checked = {c.name for c in self.checks}
        for leaf in derived_figures(self.release.methods):
            if leaf not in checked:  # an m_invariant step's counterfeits, checked against the original
                self.unchecked[leaf] = DERIVED
        return AuditResult(self.release, self.checks, self.unchecked, with_original, figures, self.settings)


def _reached(path: str, done: set[str]) -> bool:
    return any(name == path or name.startswith(path + ".") for name in done)


def _close_nested(a: Any, b: Any) -> bool:
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(_close_nested, a, b))
    return _close(a, b)


def _targets(ledger: _Ledger, recomputed: dict[str, Any]) -> None:
    """Every target on the recomputed figures: the method's own (a risk above 1/l, a diversity check that fails
    at its alpha) and the protector's signed ``targets`` (:mod:`verifier.releases.targets`)."""
    claims = ledger.release.claims
    for sentence in disclosure_breaches(recomputed.get("attribute_disclosure") or {}, claims, subject=False):
        ledger.fail("target", sentence)
    for key, entry in ((recomputed.get("diversity") or {}).items()):
        if isinstance(entry, dict) and entry.get("passed") is False:
            ledger.fail(f"diversity.{key}.target", f"the release fails {key.replace('_', ' ')} at the method's alpha")
    for miss in target_misses(ledger.release.predicate.get("targets"), recomputed):
        ledger.fail(f"targets.{miss.name}", f"the recomputed {miss.text()}")


def audit_release(release: VerifiedRelease, original: Table | None = None,
                  original_weights: np.ndarray | None = None, *, searches: Searches | None = None,
                  policy: Policy | None = None, earlier: Sequence[tuple[VerifiedRelease, Links]] = (),
                  ids: Sequence[str] | None = None) -> AuditResult:
    """Recompute the figures of a verified release under its model; ``original`` read with the release's schema.

    A release with sampling weights has its own risks recomputed with its ``weights.csv``, and the
    original's with ``original_weights`` (the original's weight column, one per record), without
    which ``risk_original`` is not checked. ``searches`` runs the permutation distances and the
    intruder elsewhere (``verifier audit --engine dask``); by default in this process. ``policy`` is the
    verdict policy file the manifest's ``policy_levels`` name, where it is not the verifier's default.
    ``earlier`` (each earlier release with its links file) and ``ids`` (the original's linking column) recompute
    the joint figures of ``claims.composition`` (:mod:`verifier.releases.composition`).
    """
    def last(done: _Ledger) -> None:
        _policy_levels(done, original, policy)
        _composition(done, original, policy, earlier, ids)

    ledger = _Ledger(release, last=last)
    if "model" in release.claims:
        ledger.check("model", release.family)
    for i, step in enumerate(release.methods):  # another tool's output: its files are checked, its run is not
        if isinstance(step, dict) and step.get("method") == EXTERNAL:
            ledger.unchecked[f"methods[{i}]"] = not_replayable(step.get("parameters") or {})
    ledger.checks += [ClaimCheck(*found) for found in external_checks(release.methods, release.hierarchies)]
    if release.family == "generalized":
        return _audit_generalized(ledger, original, original_weights)
    return _audit_ranked(ledger, original, original_weights, searches)


def _named_policy(ledger: _Ledger, path: str, levels: dict, given: Policy | None) -> Policy | None:
    """The verdict policy a section's levels name (the given one, or the verifier's default), or None: the section
    is then listed as unchecked."""
    named = (levels.get("policy") or {}).get("sha256")
    policy = next((p for p in (given, default_policy()) if p is not None and p.sha256 == named), None)
    if policy is None:
        ledger.skip(path, f"needs the verdict policy it names (SHA-256 {str(named)[:64]}): --policy FILE")
    return policy


def _policy_levels(ledger: _Ledger, original: Table | None, given: Policy | None) -> None:
    """Every original record's level under the policy the manifest names, as her own check decides it
    (:mod:`verifier.releases.levels`), and the protector's targets on the counts of every record (never on a
    sample: an earlier manifest's counts of a public draw are listed as unchecked, with the exact ones)."""
    claimed = ledger.claimed("policy_levels")
    if not isinstance(claimed, dict):
        return
    if original is None:
        ledger.skip("policy_levels", NEEDS_ORIGINAL)
        return
    policy = _named_policy(ledger, "policy_levels", claimed, given)
    if policy is None:
        return
    prepared = prepare(ledger.release)
    if ledger.space is not None and prepared.ranks_apply and np.array_equal(ledger.space.values, prepared.values):
        prepared = replace(prepared, ranked=ledger.space)  # the claims' search is not run again
    levels = record_levels(prepared, original.values, policy).to_json()
    if claimed.get("checked") != claimed.get("records"):  # an earlier manifest's public draw: not recomputed
        ledger.skip("policy_levels", f"signed from a draw of {claimed.get('checked')} of {claimed.get('records')} "
                    f"records, which this verifier no longer makes; every record counted: exposed "
                    f"{levels['exposed']:,}, at risk {levels['at_risk']:,}, protected {levels['protected']:,}")
    else:
        ledger.tree("policy_levels", levels)
    for miss in target_misses(ledger.release.predicate.get("targets"), {"policy_levels": levels}):
        ledger.fail(f"targets.{miss.name}", f"the recomputed {miss.text()}")


def _composition(ledger: _Ledger, original: Table | None, given: Policy | None,
                 earlier: Sequence[tuple[VerifiedRelease, Links]], ids: Sequence[str] | None) -> None:
    """The joint figures of the people released before (:mod:`verifier.releases.composition`), from the original,
    its linking column and the earlier releases with their links files; the protector's targets on them."""
    claimed = ledger.claimed("composition")
    if not isinstance(claimed, dict):
        return
    if original is None or ids is None or not earlier:
        ledger.skip("composition", NEEDS_EARLIER)
        return
    policy = _named_policy(ledger, "composition", claimed.get("policy_levels") or {}, given)
    if policy is None:
        return
    figures = composition_claim([prepare(ledger.release), *[prepare(e) for e, _ in earlier]], original.values, ids,
                                [links for _, links in earlier], policy)
    entries = [dict(sorted(entry.items())) for entry in figures.pop("earlier")]  # shown as the manifest lists them
    ok = claimed.get("earlier") == entries
    ledger.checks.append(ClaimCheck("composition.earlier", claimed.get("earlier"), entries, ok,
                                    "" if ok else "the earlier releases given, and the people each shares with this "
                                    "one, are not those the manifest signs"))
    for key, value in figures.items():
        ledger.tree(f"composition.{key}", value)
    for miss in joint_misses(ledger.release.predicate.get("targets"), figures):
        ledger.fail(f"targets.{miss.name}", f"the recomputed joint {miss.text()}")


def _released_weights(release: VerifiedRelease, n_records: int) -> np.ndarray | None:
    """The release's own ``weights.csv``, one per released record (``DATA_MALFORMED`` when it is not)."""
    try:
        return release.weights(n_records)
    except InvalidInputError as exc:
        raise ReleaseError(f"the signed weights cannot be read: {exc.message}", path=release.path,
                           reason="DATA_MALFORMED") from None


def _risk_original(ledger: _Ledger, original: Table, schema, weights: np.ndarray | None) -> None:
    """The original's risks, with its sampling weights when the release was made with them."""
    if ledger.release.predicate.get("sampling_weights") is None:
        weights = None
    elif weights is None:
        ledger.skip("risk_original", NEEDS_WEIGHTS)
        return
    elif len(weights) != original.n_records:
        ledger.fail("risk_original", f"{len(weights)} sampling weights for {original.n_records} original records")
        return
    ledger.section("risk_original", table_risk(original.values, schema, weights))


def _published(release: VerifiedRelease):
    try:
        return release.published()
    except InvalidInputError as exc:
        raise ReleaseError(f"the signed data cannot be read: {exc.message}", path=release.path,
                           reason="DATA_MALFORMED") from None


def _counterfeits(ledger: _Ledger, published, original: Table) -> None:
    """An m_invariant step's counterfeits against the original: their number is the released rows less the
    original's records, and the original's records fill the rows each group keeps for people
    (:func:`verifier.attacks.counterfeits.counterfeits_fit`)."""
    methods = ledger.release.methods
    where = next((i for i, step in enumerate(methods) if step.get("method") == COUNTERFEITING), None)
    if where is None:
        return
    path, claimed = f"methods.{where}.parameters", methods[where]["parameters"]["counterfeit_records"]
    found = published.n_records - original.n_records
    ledger.checks.append(ClaimCheck(f"{path}.counterfeit_records", claimed, found, claimed == found,
                                    "" if claimed == found else "the released rows less the original's records"))
    fit = counterfeits_fit(published, original.values, methods)
    if fit is None:
        ledger.unchecked[f"{path}.counterfeits"] = f"more than {MOST_PAIRS:,} pairs of records and groups to match"
        return
    ledger.checks.append(ClaimCheck(f"{path}.counterfeits", "each group's count", "fits" if fit else "does not fit",
                                    fit, "" if fit else "no matching of the original's records to the released rows "
                                    "leaves each group its declared counterfeits"))


def _audit_generalized(ledger: _Ledger, original: Table | None, original_weights: np.ndarray | None) -> AuditResult:
    """Every claim of a generalized release from the release alone; the utility figures with the original."""
    release = ledger.release
    published = _published(release)
    recomputed = group_release_claims(published, release.methods, _released_weights(release, published.n_records),
                                      mask_model(published, release.methods, release.claims, release.hierarchies))
    for name in (release.claims.get("attribute_disclosure") or {}):  # a two-step release's prior, of the original
        if original is None:
            ledger.skip(f"attribute_disclosure.{name}.marginal", NEEDS_ORIGINAL)
        elif ledger.claimed(f"attribute_disclosure.{name}.marginal") is not None:
            ledger.tree(f"attribute_disclosure.{name}.marginal",
                        sensitive_marginals(original.values, published.schema).get(name))
    for key, value in recomputed.items():
        (ledger.section if key == "reidentification" else ledger.tree)(key, value)
    _targets(ledger, recomputed)
    figures: dict[str, Any] = {"class_sizes": np.bincount(published.class_labels()).tolist()
                               if published.n_records else [], "k": release.claims.get("k")}
    if original is None:
        ledger.skip("utility", NEEDS_ORIGINAL)
        ledger.skip("risk_original", NEEDS_ORIGINAL)
        return ledger.result(False, figures)
    _risk_original(ledger, original, published.schema, original_weights)
    _counterfeits(ledger, published, original)
    frame = original.to_frame()
    assessed = assess_generalized({n: frame[n].tolist() for n in published.schema.names},
                                  {n: published.text[n] for n in published.schema.names}, published.schema,
                                  hierarchies=release.hierarchies)
    for key in ("ncp", "data_utility", "discernibility", "qi_distortion_ratio", "sa_distortion_ratio"):
        if key in assessed or ledger.claimed(f"utility.{key}") is not None:
            ledger.check(f"utility.{key}", assessed.get(key))
    # information loss beside NCP, signed since the fourth round: checked where the manifest has it
    for key in ("average_class_size", "exact_cell_share", "suppressed_records", "sensitive_at_root"):
        if ledger.claimed(f"utility.{key}") is not None:
            ledger.check(f"utility.{key}", assessed.get(key))
    ledger.tree("utility.attribute_disclosure_of_original_records", assessed["attribute_disclosure"])
    return ledger.result(True, figures)


def _release_alone(ledger: _Ledger, table: Table) -> dict[str, Any]:
    """What a release with ranks gives without the original: k, spread kinds, the released figures."""
    release, schema, y = ledger.release, table.schema, table.values
    ledger.check("n_records", table.n_records)
    k = smallest_class(y, schema)
    ledger.check("k", k)
    _targets(ledger, {"k": k})
    ledger.section("reidentification", table_risk(y, schema, _released_weights(release, table.n_records)))
    ledger.check("permuted_privacy.spread_kinds", [spread_kind(a.kind) for a in schema.attributes])
    ranked = [j for j, a in enumerate(schema.attributes) if a.kind != "nominal"]
    for j, attr in enumerate(schema.attributes):
        if j in ranked:
            ledger.check(f"utility.attributes.{attr.name}.mean_anonymized", _num(y[:, j].mean()))
            ledger.check(f"utility.attributes.{attr.name}.variance_anonymized", _num(y[:, j].var()))
    ledger.check("utility.correlation_attributes", [schema.names[j] for j in ranked])
    with np.errstate(invalid="ignore", divide="ignore"):
        cy = np.atleast_2d(np.corrcoef(y[:, ranked], rowvar=False)) if len(ranked) and len(y) > 1 else None
    ledger.check("utility.correlation_anonymized",
                 [[_num(v) for v in row] for row in cy] if cy is not None else [])
    for name, entry in family_disclosure(release.family, release.methods, None, y, schema, None).items():
        ledger.tree(f"attribute_disclosure.{name}.estimated", entry.get("estimated"))
    for path in ("intruder.alpha", "intruder.random_records", "intruder.intruder_seed"):
        ledger.setting(path)
    for path in ("protector_only", "utility.distortion", "utility.il1s"):
        ledger.skip(path, PAIRING)
    for attr in schema.attributes:
        for key in ("rank_correlation", "mean_abs_y_x", "changed_share"):
            ledger.skip(f"utility.attributes.{attr.name}.{key}", PAIRING)
    return {"attributes": schema.names}


def _audit_ranked(ledger: _Ledger, original: Table | None, original_weights: np.ndarray | None,
                  searches: Searches | None) -> AuditResult:
    """A release with ranks: what the release alone allows, then the rest with the original."""
    release = ledger.release
    try:
        table = release.table()
    except InvalidInputError as exc:
        raise ReleaseError(f"the signed data cannot be read: {exc.message}", path=release.path,
                           reason="DATA_MALFORMED") from None
    figures = _release_alone(ledger, table)
    if original is None:
        for path in ("permuted_privacy", "intruder", "attribute_disclosure", "utility", "risk_original"):
            ledger.skip(path, NEEDS_ORIGINAL)
        return ledger.result(False, figures)
    if original.n_records != table.n_records:
        ledger.checks.append(ClaimCheck("original.n_records", table.n_records, original.n_records, False,
                                        "the original has another number of records than the release"))
        return ledger.result(True, figures)
    _risk_original(ledger, original, table.schema, original_weights)
    _with_original(ledger, original, table, figures, searches)
    return ledger.result(True, figures)


def _with_original(ledger: _Ledger, original: Table, table: Table, figures: dict[str, Any],
                   searches: Searches | None) -> None:
    """(D, v), the intruder's figures rerun with the manifest's settings, the family's risks, the original's figures."""
    release, schema, y = ledger.release, table.schema, table.values
    it = release.claims.get("intruder") or {}
    exhaustive = it.get("random_method") == "exhaustive"
    records = int(it.get("random_records") or 10_000)
    assessed = assess(
        original.values, y, schema, paired=False, alpha=float(it.get("alpha", 0.01)),
        samples=records, exhaustive_limit=max(records, 1) if exhaustive else 0,
        random_state=int(it.get("intruder_seed", 0)), searches=searches,
    )
    ledger.space = assessed.space if isinstance(assessed.space, RankSpace) else None
    result = assessed.to_json()
    ledger.check("permuted_privacy.distance", result["permuted_privacy"]["distance"])
    ledger.check("permuted_privacy.variances", result["permuted_privacy"]["variances"])
    for key in ("random_method", "confidently_linked_share", "hellinger"):
        ledger.check(f"intruder.{key}", result["intruder"][key])
    disclosure = family_disclosure(release.family, release.methods, original.values, y, schema,
                                   result["attribute_disclosure"])
    for name, entry in disclosure.items():
        ledger.tree(f"attribute_disclosure.{name}", {k: v for k, v in entry.items() if k != "estimated"})
    _targets(ledger, {"attribute_disclosure": disclosure, "permuted_privacy": result["permuted_privacy"],
                      "intruder": result["intruder"]})
    utility = result["utility"]
    for name, entry in utility["attributes"].items():
        for key in ("mean_original", "variance_original", "mean_abs_y_z"):
            if key in entry:
                ledger.check(f"utility.attributes.{name}.{key}", entry[key])
    for key in ("correlation_original", "max_abs_correlation_change"):
        ledger.check(f"utility.{key}", utility[key])
    if "eigenvalue_difference" in (release.predicate.get("utility") or {}):  # added by a later format
        ledger.check("utility.eigenvalue_difference", utility["eigenvalue_difference"])
    figures.update(assessment=assessed, original_distribution=result["intruder"]["original_distribution"],
                   random_distribution=result["intruder"]["random_distribution"],
                   record_distances=assessed.permuted_privacy.distances,
                   variances=result["permuted_privacy"]["variances"],
                   claimed_distance=(release.claims.get("permuted_privacy") or {}).get("distance"),
                   claimed_variances=(release.claims.get("permuted_privacy") or {}).get("variances"),
                   spread_kinds=result["permuted_privacy"]["spread_kinds"])


def audit_rows(result: AuditResult, *, batch: int) -> Iterator[dict[str, Any]]:
    """Every original record's row of an audit with the original: her permutation distance to the release, its
    matches, deviations and spreads (:mod:`verifier.core.record_rows`), then her link by the intruder
    (``link_distance``, ``p_value`` with its interval, ``confidently_linked``)."""
    assessed = result.figures.get("assessment")
    if assessed is None:
        raise ValueError("per-record rows need an audit with the original table of a release with ranks")
    names = assessed.schema.names
    rows = distance_columns(assessed.permuted_privacy, assessed.space, names, batch=batch)
    for own, link in zip(rows, link_columns(assessed.intruder, batch=batch)):
        yield {**own, "link_distance": link["distance"], "p_value": link["p_value"],
               "p_value_low": link["p_value_low"], "p_value_high": link["p_value_high"],
               "confidently_linked": link["confidently_linked"]}


def _num(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None
