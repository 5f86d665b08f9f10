"""The auditor: recompute every claim of a verified release that the given data allow.

From the release alone: the number of records, and k (the smallest number of
released records sharing the same quasi-identifier values). With the
original table, which only an entitled auditor has: the data-set (D, v), the
intruder's confidently linked share and Hellinger distance (with the
intruder's public seed and number of random records from the manifest), and
the per-attribute means and variances. The figures under ``protector_only``
need the secret pairing of rows and cannot be checked; the report says so.

A claim is true when the recomputed figure equals it: integers exactly,
floats to a relative 1e-9 (the same computation on the same bytes, up to
summation order).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verifier.attacks.assessment import assess, smallest_class
from verifier.errors import InvalidInputError
from verifier.data.tables import Table, write_atomic, write_atomic_bytes
from verifier.attacks.generalized import assess_generalized
from verifier.releases.recompute import family_disclosure, group_release_claims
from verifier.releases.verdict import disclosure_breaches
from verifier.releases.verification import ReleaseError, VerifiedRelease

__all__ = ["ClaimCheck", "AuditResult", "audit_release", "write_report"]

_REL = 1e-9


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
    unchecked: list[str]
    with_original: bool
    figures: dict[str, Any] = field(default_factory=dict)

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
            "unchecked": self.unchecked,
        }


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
        return math.isclose(float(a), float(b), rel_tol=_REL, abs_tol=1e-300)
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


def _check(checks: list[ClaimCheck], name: str, claimed: Any, computed: Any) -> None:
    if isinstance(claimed, list) or isinstance(computed, list):
        ok = (isinstance(claimed, list) and isinstance(computed, list) and len(claimed) == len(computed)
              and all(_close(a, b) for a, b in zip(claimed, computed)))
    else:
        ok = _close(claimed, computed)
    checks.append(ClaimCheck(name, claimed, computed, ok, "" if ok else _direction(name, claimed, computed)))


def _check_tree(checks: list[ClaimCheck], prefix: str, claimed: Any, computed: Any) -> None:
    """Compare every leaf of a recomputed figure (nested dicts) with the claim at the same path."""
    if isinstance(computed, dict):
        claimed = claimed if isinstance(claimed, dict) else {}
        for key, value in computed.items():
            _check_tree(checks, f"{prefix}.{key}", claimed.get(key), value)
    else:
        _check(checks, prefix, claimed, computed)


def _target_checks(checks: list[ClaimCheck], claims: dict[str, Any], recomputed: dict[str, Any]) -> None:
    """The method's own targets, on the recomputed figures: a risk above 1/l, a diversity check that fails."""
    for sentence in disclosure_breaches(recomputed.get("attribute_disclosure") or {}, claims, subject=False):
        checks.append(ClaimCheck("target", None, None, False, sentence))
    for key, entry in ((recomputed.get("diversity") or {}).items()):
        if isinstance(entry, dict) and entry.get("passed") is False:
            checks.append(ClaimCheck(f"diversity.{key}.target", True, False, False,
                                     f"the release fails {key.replace('_', ' ')} at the method's alpha"))


def audit_release(release: VerifiedRelease, original: Table | None = None) -> AuditResult:
    """Recompute the claims of a verified release under its model; ``original`` read with the release's schema."""
    claims = release.claims
    checks: list[ClaimCheck] = []
    if "model" in claims:
        _check(checks, "model", claims.get("model"), release.family)
    if release.family == "generalized":
        return _audit_generalized(release, original, checks)
    return _audit_ranked(release, original, checks)


def _published(release: VerifiedRelease):
    try:
        return release.published()
    except InvalidInputError as exc:
        raise ReleaseError(f"the signed data cannot be read: {exc.message}", path=release.path,
                           reason="DATA_MALFORMED") from None


def _audit_generalized(release: VerifiedRelease, original: Table | None, checks: list[ClaimCheck]) -> AuditResult:
    """Every claim of a generalized release from the release alone; the utility figures with the original."""
    claims = release.claims
    published = _published(release)
    recomputed = group_release_claims(published, release.methods)
    for key, value in recomputed.items():
        _check_tree(checks, key, claims.get(key), value)
    _target_checks(checks, claims, recomputed)
    figures: dict[str, Any] = {"class_sizes": np.bincount(published.class_labels()).tolist()
                               if published.n_records else [], "k": claims.get("k")}
    utility = release.predicate.get("utility") or {}
    if original is None:
        unchecked = [f"utility.{k}: needs the original" for k in sorted(utility)]
        return AuditResult(release, checks, unchecked, with_original=False, figures=figures)
    frame = original.to_frame()
    assessed = assess_generalized({n: frame[n].tolist() for n in published.schema.names},
                                  {n: published.text[n] for n in published.schema.names}, published.schema,
                                  hierarchies=release.hierarchies)
    for key in ("ncp", "data_utility", "discernibility", "qi_distortion_ratio", "sa_distortion_ratio"):
        if key in assessed or key in utility:
            _check(checks, f"utility.{key}", utility.get(key), assessed.get(key))
    _check_tree(checks, "utility.attribute_disclosure_of_original_records",
                utility.get("attribute_disclosure_of_original_records"), assessed["attribute_disclosure"])
    return AuditResult(release, checks, [], with_original=True, figures=figures)


def _audit_ranked(release: VerifiedRelease, original: Table | None, checks: list[ClaimCheck]) -> AuditResult:
    """A release with ranks: k and the figures the family allows from the release alone; the rest with the original."""
    claims = release.claims
    try:
        table = release.table()
    except InvalidInputError as exc:
        raise ReleaseError(f"the signed data cannot be read: {exc.message}", path=release.path,
                           reason="DATA_MALFORMED") from None
    schema, y, family = table.schema, table.values, release.family
    _check(checks, "n_records", claims.get("n_records"), table.n_records)
    _check(checks, "k", claims.get("k"), smallest_class(y, schema))
    unchecked = [f"protector_only.{k}" for k in sorted((claims.get("protector_only") or {}))]
    figures: dict[str, Any] = {"variance_anonymized": y.var(axis=0).tolist(), "attributes": schema.names,
                               "kinds": [a.kind for a in schema.attributes]}
    alone = family_disclosure(family, release.methods, None, y, schema, None)
    for name, entry in alone.items():  # the estimated risk of randomized response needs the release alone
        _check_tree(checks, f"attribute_disclosure.{name}.estimated",
                    ((claims.get("attribute_disclosure") or {}).get(name) or {}).get("estimated"), entry.get("estimated"))
    if original is None:
        unchecked = ["permuted_privacy.distance", "permuted_privacy.variances", "intruder.confidently_linked_share",
                     "intruder.hellinger", "attribute_disclosure (needs the original)",
                     "utility (means and variances)"] + unchecked
        return AuditResult(release, checks, unchecked, with_original=False, figures=figures)
    if original.n_records != table.n_records:
        checks.append(ClaimCheck("original.n_records", table.n_records, original.n_records, False,
                                 "the original has another number of records than the release"))
        return AuditResult(release, checks, unchecked, with_original=True, figures=figures)
    it = claims.get("intruder") or {}
    exhaustive = it.get("random_method") == "exhaustive"
    records = int(it.get("random_records") or 10_000)
    result = assess(
        original.values, y, schema, paired=False, alpha=float(it.get("alpha", 0.01)),
        samples=records, exhaustive_limit=max(records, 1) if exhaustive else 0,
        random_state=int(it.get("intruder_seed", 0)),
    ).to_json()
    pp = claims.get("permuted_privacy") or {}
    _check(checks, "permuted_privacy.distance", pp.get("distance"), result["permuted_privacy"]["distance"])
    _check(checks, "permuted_privacy.variances", pp.get("variances"), result["permuted_privacy"]["variances"])
    _check(checks, "intruder.random_method", it.get("random_method"), result["intruder"]["random_method"])
    _check(checks, "intruder.confidently_linked_share", it.get("confidently_linked_share"),
           result["intruder"]["confidently_linked_share"])
    _check(checks, "intruder.hellinger", it.get("hellinger"), result["intruder"]["hellinger"])
    disclosure = family_disclosure(family, release.methods, original.values, y, schema, result["attribute_disclosure"])
    claimed_risk = claims.get("attribute_disclosure") or {}
    for name, entry in disclosure.items():
        for key in ("max", "mean"):
            _check(checks, f"attribute_disclosure.{name}.{key}", (claimed_risk.get(name) or {}).get(key), entry.get(key))
    _target_checks(checks, claims, {"attribute_disclosure": disclosure})
    claimed_utility = (release.predicate.get("utility") or {}).get("attributes") or {}
    for name, entry in result["utility"]["attributes"].items():
        for key in ("mean_original", "mean_anonymized", "variance_original", "variance_anonymized"):
            if key in entry:
                _check(checks, f"utility.{name}.{key}", (claimed_utility.get(name) or {}).get(key), entry[key])
    figures.update(variance_original=original.values.var(axis=0).tolist(),
                   original_distribution=result["intruder"]["original_distribution"],
                   random_distribution=result["intruder"]["random_distribution"])
    return AuditResult(release, checks, unchecked, with_original=True, figures=figures)


def _plots(result: AuditResult, stem: str) -> list[tuple[str, bytes]]:
    """PNG plots: the random-match histograms (with the original) and the per-attribute variances."""
    from verifier.plots import figure, label, png

    out = []
    f = result.figures
    if "class_sizes" in f:
        return [(f"{stem}-group-sizes.png", _group_sizes_plot(f))]
    if "random_distribution" in f:
        fig, ax = figure()
        d = np.arange(len(f["random_distribution"]))
        ax.bar(d - 0.2, [f["original_distribution"][str(k)] for k in d], width=0.4, label="original records")
        ax.bar(d + 0.2, [f["random_distribution"][str(k)] for k in d], width=0.4, label="random records")
        ax.set_xlabel("permutation distance of the closest match in Z")
        ax.set_ylabel("share of records")
        ax.set_title("Random-match test (SPEC section 5)")
        ax.legend()
        out.append((f"{stem}-random-match.png", png(fig)))
    fig, ax = figure()
    names = [label(n if len(n) <= 12 else n[:11] + "...") for n in f["attributes"]]
    x = np.arange(len(names))
    if "variance_original" in f:
        ax.bar(x - 0.2, f["variance_original"], width=0.4, label="original")
        ax.bar(x + 0.2, f["variance_anonymized"], width=0.4, label="release")
    else:
        ax.bar(x, f["variance_anonymized"], width=0.6, label="release")
    ax.set_xticks(x, names, rotation=30, ha="right")
    ax.set_yscale("symlog")
    ax.set_ylabel("variance (rank keys)")
    ax.set_title("Per-attribute variance")
    ax.legend()
    out.append((f"{stem}-variances.png", png(fig)))
    return out


def _group_sizes_plot(f: dict[str, Any]) -> bytes:
    """How many records sit in groups of each size, with the claimed k marked: no bar may lie left of it."""
    from verifier.plots import figure, png

    fig, ax = figure()
    sizes, counts = np.unique(np.asarray(f["class_sizes"], dtype=np.int64), return_counts=True)
    ax.vlines(sizes, 0, sizes * counts, linewidth=4, label="records in groups of that size")
    k = f.get("k")
    if isinstance(k, int) and not isinstance(k, bool):
        ax.axvline(k, color="black", linestyle="--", label=f"claimed k = {k}")
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("size of the group of records sharing published quasi-identifiers")
    ax.set_ylabel("number of records")
    ax.set_title("Group sizes of the generalized release")
    ax.legend()
    return png(fig)


def _md(text: Any) -> str:
    """Untrusted text in a Markdown table cell: no pipes, no markup, one line."""
    s = " ".join(str(text).split())
    for ch in "\\|`*_[]<>#":
        s = s.replace(ch, "\\" + ch)
    return s


def write_report(result: AuditResult, path: str) -> list[str]:
    """The audit as Markdown, with PNG plots beside it; every file written atomically. Returns the paths."""
    from pathlib import Path

    p = Path(path)
    stem = p.stem
    plots = _plots(result, stem)
    r = result.release
    lines = [
        f"# Audit of release {_md(r.dataset_id)}, version {r.release_version}",
        "",
        f"- Verified: signed by the trusted key with fingerprint `{r.key.fingerprint}`.",
        f"- Created: {_md(r.created_at)}; methods: " + ", ".join(_md(m.get("method")) for m in r.methods) + ".",
        f"- Original table given: {'yes' if result.with_original else 'no'}.",
        f"- Verdict: **{'every checked claim is true' if result.passed else 'a claim is FALSE'}**.",
        "",
        "| claim | manifest | recomputed | verdict |",
        "| --- | --- | --- | --- |",
    ]
    for c in result.checks:
        lines.append(f"| {_md(c.name)} | {_md(c.claimed)} | {_md(c.computed)} | "
                     f"{'true' if c.ok else 'FALSE: ' + _md(c.note or 'differs')} |")
    if result.unchecked:
        lines += ["", "Not checked (needs " + ("the secret row pairing" if result.with_original else
                                                "the original table, or the secret row pairing") + "): "
                  + ", ".join(f"`{u}`" for u in result.unchecked) + "."]
    lines += [""] + [f"![{name}]({name})" for name, _ in plots] + [""]
    text = "\n".join(lines)
    written = []
    for name, data in plots:
        target = p.with_name(name)
        write_atomic_bytes(target, data)
        written.append(str(target))
    write_atomic(p, lambda handle: handle.write(text))
    written.append(str(p))
    return written
