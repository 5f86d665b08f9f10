"""Ground truth for the verdict (issue 50, item 5): the named intruder simulated on four releases of Adult.

Each release is made, signed and verified as a protector and a subject would (SD k-anonymity, randomized
response, random attribute replacement; m-invariance with m = 2 is refused on Adult since issue 58, its table not
m-eligible; marital-status, race and sex as quasi-identifiers, salary-class
sensitive). Every subject's level is her own check's (the default verdict policy, her random-match test where the
release has ranks). Beside it, the intruder the project names, who knows every subject's quasi-identifiers and the
published method, guesses her salary-class:

- SD and m-invariance are deterministic given everyone's quasi-identifiers: he reruns them and reads her own class.
  His posterior of her value is its share in her class; his best guess is the class's most common value;
- randomized response: paper 000's attacker, who reads the published salary-class of a released record published
  with her quasi-identifiers: his chance is the share of those records showing her value;
- random replacement: paper 004's posterior of her value from her record and the release; his best guess is its
  most likely value.

A guesser who knows only the base rates draws a value with the released shares (right with her value's base rate)
or always says the most common one. The levels must order the real risk, and among PROTECTED subjects the intruder
must do no better than the base rate plus the policy's margin (enhanced beta-likeness at 1: a posterior of at most
``p (1 + min(1, -ln p))`` for a base rate ``p``), subject by subject.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments.adult import adult_schema, adult_words, load_adult
from experiments.outcome import Comparison, Outcome, markdown_table

__all__ = ["FAMILIES", "run", "truth_by_level"]

QI = ("marital-status", "race", "sex")
SENSITIVE = "salary-class"
#: each family's method and parameters, as `publisher release` takes them
FAMILIES: dict[str, tuple[str, dict[str, Any]]] = {
    "SD k-anonymity, k = 5": ("sd_k_anonymity", {"k": 5}),
    # m-invariance, m = 2, is refused on Adult since issue 58: three in four records earn <=50K, more than n/m
    "randomized response, l = 2": ("randomized_response", {"l": 2.0, "scope": "both"}),
    "random replacement, k = 1": ("random_attribute_replacement", {"k": 1}),
}
LEVELS = ("exposed", "at_risk", "protected")
#: a posterior the default policy calls certain (value_near_certain)
CERTAIN = 0.99


def _margin(prior: np.ndarray) -> np.ndarray:
    """The policy's bound on a protected subject's posterior: enhanced beta-likeness at 1 (value_gain)."""
    with np.errstate(divide="ignore"):
        return np.minimum(1.0, prior * (1.0 + np.minimum(1.0, -np.log(prior))))


def _levels(prepared: Any, records: np.ndarray) -> list[str]:
    """Each record's level by her own check (the random-match test at the CLI's defaults where ranks apply)."""
    from verifier.attacks.intruder import random_match_distribution, subject_report
    from verifier.releases.subject import check_record

    distinct, inverse = np.unique(records, axis=0, return_inverse=True)
    random = random_match_distribution(prepared.space, samples=2_000, random_state=0) if prepared.ranks_apply else None
    levels = []
    for record in distinct:
        check = check_record(prepared, record, whole_space=prepared.ranks_apply)
        report = subject_report(random, check.result) if random is not None else None
        levels.append(check.verdict(report).level)
    return [levels[k] for k in np.asarray(inverse).ravel()]


def _class_truth(table: pd.DataFrame, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Her value's share in her own class and whether her class's most common value is hers (ties shared), from
    the method's cells in the input's order (counterfeit records after the people, counted in the shares as the
    method's model counts them): the intruder who reruns the method reads them."""
    keys = table[list(QI)].astype(str).agg("\x1f".join, axis=1).to_numpy()
    shown = table[SENSITIVE].astype(str).to_numpy()
    posterior, best = np.zeros(len(values)), np.zeros(len(values))
    for key in np.unique(keys):
        rows = np.flatnonzero(keys == key)
        found, counts = np.unique(shown[rows], return_counts=True)
        share = dict(zip(found.tolist(), (counts / rows.size).tolist()))
        tied = set(found[counts == counts.max()].tolist())
        for r in rows[rows < len(values)].tolist():
            posterior[r] = share[values[r]]
            best[r] = 1.0 / len(tied) if values[r] in tied else 0.0
    return posterior, best


def _rr_truth(prepared: Any, records: np.ndarray, released: pd.DataFrame,
              frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Paper 000's attacker, who reads the published salary-class of a released record published with her
    quasi-identifiers. His chance of being right, over the randomization, is Result 1 at her cell on the
    original's distribution, which the intruder who knows everyone's records computes; how often his best guess
    (the most common value among those records) is right is read on this release."""
    from verifier.attacks.disclosure import rr_risk
    from verifier.attacks.models import rr_model
    from verifier.releases.family import step_parameters

    schema = prepared.schema
    keep = (step_parameters(prepared.release.methods, "randomized_response") or {})["keep_probabilities"]
    qi, s, ps = rr_model(schema, {str(k): float(v) for k, v in keep.items()})
    cols = [*qi, s]
    dims = [len(schema.attributes[j].categories or ()) for j in cols]
    cells = np.ravel_multi_index(records[:, cols].astype(np.int64).T, dims)
    pi = np.bincount(cells, minlength=int(np.prod(dims))).reshape(dims) / len(records)
    posterior = rr_risk(pi, ps[:-1], ps[-1]).ravel()[cells]
    keys = released[list(QI)].astype(str).agg("\x1f".join, axis=1).to_numpy()
    shown = released[SENSITIVE].astype(str).to_numpy()
    mine = frame[list(QI)].astype(str).agg("\x1f".join, axis=1).to_numpy()
    values = frame[SENSITIVE].astype(str).to_numpy()
    best = np.zeros(len(frame))
    for key in np.unique(mine):
        there = shown[keys == key]
        if there.size:
            found, counts = np.unique(there, return_counts=True)
            tied = set(found[counts == counts.max()].tolist())
            rows = np.flatnonzero(mine == key)
            best[rows] = [1.0 / len(tied) if values[r] in tied else 0.0 for r in rows.tolist()]
    return posterior, best


def _ra_truth(prepared: Any, records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Paper 004's posterior of her value, and whether its most likely value is hers."""
    from verifier.attacks.models import replacement_shares
    from verifier.releases.family import step_parameters

    schema = prepared.schema
    s = schema.names.index(SENSITIVE)
    params = step_parameters(prepared.release.methods, "random_attribute_replacement") or {}
    posterior, best = np.zeros(len(records)), np.zeros(len(records))
    distinct, inverse = np.unique(records, axis=0, return_inverse=True)
    for k, record in enumerate(distinct):
        shares = replacement_shares(prepared.values, schema, params, record, s)
        top = max(shares.values(), default=0.0)
        tied = [v for v, p in shares.items() if p == top]
        rows = np.flatnonzero(np.asarray(inverse).ravel() == k)
        posterior[rows] = shares.get(float(record[s]), 0.0)
        best[rows] = 1.0 / len(tied) if float(record[s]) in tied else 0.0
    return posterior, best


def truth_by_level(frame: pd.DataFrame, family: str, folder: Path) -> dict[str, Any]:
    """One family's release of ``frame``: every subject's level, the intruder's posterior of her value and best
    guess, the base-rate guessers' and the policy's bound, per subject."""
    from publisher.api import anonymize, release
    from publisher.keys import keygen
    from verifier.data.tables import table_from_frame
    from verifier.releases.facts import open_release
    from verifier.releases.subject import prepare

    method, params = FAMILIES[family]
    schema = adult_schema(frame, [*QI, SENSITIVE], sensitive=[SENSITIVE])
    if not (folder / "keys" / "private.pem").exists():
        keygen(folder / "keys", None)
    out = folder / method
    release(frame, method, key=folder / "keys" / "private.pem", out=out, dataset_id=method, schema=schema, seed=1,
            samples=200, allow_degenerate=True, protector_report=folder / f"{method}.protector.json", **params)
    prepared = prepare(open_release(str(out), str(folder / "keys" / "public.pem")))
    records = table_from_frame(frame, prepared.schema).values
    values = frame[SENSITIVE].astype(str).to_numpy()
    if method in ("sd_k_anonymity", "m_invariant"):
        posterior, best = _class_truth(anonymize(frame, method, schema=schema, seed=1, **params).table, values)
    elif method == "randomized_response":
        released = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
        posterior, best = _rr_truth(prepared, records, released, frame)
    else:
        posterior, best = _ra_truth(prepared, records)
    released_values = (pd.Series(prepared.published.text[SENSITIVE]) if prepared.published is not None else
                       pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)[SENSITIVE])
    shares = released_values.str.strip().value_counts(normalize=True)
    prior = np.array([float(shares.get(v, 0.0)) for v in values])
    return {"levels": np.array(_levels(prepared, records)), "posterior": posterior, "best": best, "prior": prior,
            "mode": (values == shares.idxmax()).astype(float), "bound": _margin(prior)}


def _rows(found: dict[str, Any]) -> list[list[str]]:
    out = []
    for level in LEVELS:
        at = found["levels"] == level
        if not at.any():
            out.append([level.replace("_", " "), "0", *["-"] * 7])
            continue
        post = found["posterior"][at]
        out.append([level.replace("_", " "), f"{int(at.sum()):,}", f"{post.mean():.2%}",
                    f"{np.mean(post >= CERTAIN):.2%}", f"{np.mean(post > found['bound'][at] + 1e-12):.2%}",
                    f"{found['best'][at].mean():.2%}", f"{found['prior'][at].mean():.2%}",
                    f"{found['mode'][at].mean():.2%}", f"{found['bound'][at].mean():.2%}"])
    return out


def _shares_by_level(levels: np.ndarray, hit: np.ndarray) -> list[float]:
    return [float(hit[levels == level].mean()) for level in LEVELS if (levels == level).any()]


def _comparisons(family: str, found: dict[str, Any]) -> list[Comparison]:
    levels, posterior, bound = found["levels"], found["posterior"], found["bound"]
    safe = levels == "protected"
    over = int(np.sum(posterior[safe] > bound[safe] + 1e-12))
    certain = _shares_by_level(levels, posterior >= CERTAIN)
    beyond = _shares_by_level(levels, posterior > bound + 1e-12)

    def ordered(shares: list[float]) -> bool:
        return all(a >= b for a, b in zip(shares, shares[1:]))

    return [
        Comparison(f"{family}: PROTECTED subjects the intruder reads beyond the policy's margin",
                   "none", f"{over} of {int(safe.sum()):,}", "reproduced" if over == 0 else "differs",
                   "each protected subject's true posterior against min(1, p (1 + min(1, -ln p))) for her base rate p"
                   if over == 0 else "the verdict called protected a subject the intruder reads better than the "
                   "policy allows"),
        Comparison(f"{family}: subjects the intruder knows with certainty, by level",
                   "exposed >= at risk >= protected", " >= ".join(f"{v:.2%}" for v in certain),
                   "reproduced" if ordered(certain) else "differs",
                   "share of each level whose true posterior is 0.99 or more" if ordered(certain) else
                   "a milder level holds more subjects the intruder is certain of"),
        Comparison(f"{family}: subjects read beyond the policy's margin, by level",
                   "exposed >= at risk >= protected", " >= ".join(f"{v:.2%}" for v in beyond),
                   "reproduced" if ordered(beyond) else "differs",
                   "share of each level whose true posterior passes her enhanced-beta bound" if ordered(beyond) else
                   "a milder level holds more subjects read beyond the margin (at risk by the worst group she could "
                   "be in, exposed by a group that is not hers)"),
    ]


def run(quick: bool) -> Outcome:
    frame, where = load_adult(quick)
    frame = frame.head(600).reset_index(drop=True) if quick else frame
    outcome = Outcome(name="attack_truth", title="The named intruder against the verdict: ground truth on Adult",
                      quick=quick, data=adult_words(frame),
                      setting=f"Data: {where}{', its first 600 records' if quick else ''}; quasi-identifiers "
                      f"{', '.join(QI)}; sensitive attribute {SENSITIVE}; one release per family, seed 1, levels by "
                      "each subject's own check under the default verdict policy.")
    header = ["level", "subjects", "intruder's posterior", "certain", "beyond the margin",
              "intruder's best guess right", "base-rate draw right", "most common value right", "policy's bound"]
    with tempfile.TemporaryDirectory() as folder:
        for family in FAMILIES:
            found = truth_by_level(frame, family, Path(folder))
            outcome.sections.append((family, markdown_table(header, _rows(found))))
            outcome.comparisons += _comparisons(family, found)
    outcome.sections.append(("How to read the tables", (
        "Per level, the mean over its subjects of: the probability the named intruder gives her true value "
        "(his posterior), the share he knows with certainty (a posterior of 0.99 or more), the share he reads "
        "beyond the policy's margin (above the bound of the last column), how often his best guess is right, how "
        "often a guesser who only knows the base rates is "
        "right drawing a value with them (her value's base rate) or always saying the most common value, and the "
        "largest posterior the verdict policy lets a protected subject have (enhanced beta-likeness at 1). Levels "
        "are the subjects' own checks, so a subject sits where her verdict put her.")))
    return outcome
