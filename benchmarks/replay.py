"""How often ``publisher replay`` cries wolf, and how often it catches a parameter that was not the one used.

    python -m benchmarks.replay                  # 100 honest and 30 dishonest releases per factor, 30 runs each
    python -m benchmarks.replay --quick          # 20 and 10, 20 runs (a smoke test; rates are coarse)
    python -m benchmarks.replay --json

For each method (and the chain noise then reverse mapping): honest releases (the published parameter was used, fresh
secret seed each) give the false-alarm rate at alpha 0.01; dishonest ones
(the method was run with the parameter off by a factor of 2, 3 and 10, the
manifest says the published value, and a derived parameter is the one the
published value gives) give the power. Data: a census-like table of n = 300
records (age, income growing with age and hours, hours, sex, disease),
drawn with a fixed seed, its numbers binned for random attribute replacement
and the two-step generalization; each release gets its own secret seed. This measures
the test's statistics through the same replay core the command runs
(``publisher.replay.replay_table``), without signing each release.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

BINNED = ("random_attribute_replacement", "multi_sensitive_generalization")
#: method -> (its parameter name, the published value, how a factor changes it, other fixed parameters);
#: randomized response's factor multiplies the share of values it randomizes, 1 - keep probability
CASES = {
    "additive_noise": ("relative_sd", 0.5, "times", {}),
    "rank_swapping": ("p", 5.0, "times", {}),
    "microaggregation": ("k", 3, "times", {}),
    "randomized_response": ("keep_probabilities", 0.9, "randomized share", {}),
    "random_attribute_replacement": ("k", 1, "times", {"n_queries": 1}),
    "sd_k_anonymity": ("k", 3, "times", {}),
    "multi_sensitive_generalization": ("k", 2, "times", {"alpha_qi": 0.9, "alpha_sa": 0.9}),
    # a chain: reverse mapping after noise puts the original values back and hides much of the noise level
    "additive_noise+reverse_mapping": ("relative_sd", 0.5, "times", {}),
}
#: how many honest releases of each case have the replay's own power measured (issue 26, item 6)
POWER_RELEASES = 10
FACTORS = (2, 3, 10)


def census(n: int = 300, seed: int = 5, *, binned: bool = False):
    """The table; ``binned`` rounds age and hours to decades and income to ten quantile bins (for the methods that
    treat quasi-identifiers as categories, as paper 004 pre-bins continuous ones)."""
    from verifier.data.schema import Schema
    from verifier.data.tables import table_from_frame

    import pandas as pd

    rng = np.random.default_rng(seed)
    age, hours = rng.integers(18, 90, n), rng.integers(5, 70, n)
    frame = pd.DataFrame({
        "age": age.astype(float), "income": np.round(np.exp(8 + 0.02 * age + 0.02 * hours + rng.normal(0, 0.3, n)), 2),
        "hours": hours.astype(float), "sex": rng.choice(["F", "M"], n),
        "disease": rng.choice(["flu", "cancer", "hiv", "none"], n, p=[.5, .2, .1, .2]),
    })
    if binned:
        for name in ("age", "hours"):
            frame[name] = (frame[name] // 10) * 10
        frame["income"] = pd.qcut(frame["income"], 10, labels=False).astype(float)
    schema = Schema.from_dict({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "income", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "hours", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["cancer", "flu", "hiv", "none"]},
    ]})
    return table_from_frame(frame, schema)


def _one(method: str, used_value, published_params: dict, x, secret: int, runs: int,
         power_runs: int = 0) -> bool | str | None:
    """Is one release, made with ``used_value``, found implausible? None if the method refuses that value.
    With ``power_runs``, the replay measures its own power and its verdict is returned instead."""
    from publisher.methods import anonymize, make_method
    from publisher.replay import release_statistics, replay_table
    from verifier.errors import InvalidInputError
    from verifier.releases.family import family_of

    name, _, _, fixed = CASES[method]
    first, *then = method.split("+")
    try:
        used = [make_method(first, {**fixed, name: used_value}), *map(make_method, then)]
        result = anonymize(x.to_frame(), x.schema, used, random_state=secret)
        # what the dishonest manifest says: the published parameter, and what it derives on X
        published = anonymize(x.to_frame(), x.schema, [make_method(first, published_params), *map(make_method, then)],
                              random_state=secret)
    except InvalidInputError:
        return None
    methods = [{"method": step["method"], "parameters": step["parameters"]} for step in published.steps]
    stats = release_statistics(x, result.released, family_of(methods))
    replay = replay_table(x, methods, stats, runs=runs, seed=secret + 1, power_runs=power_runs)
    return replay.verdict if power_runs else not replay.plausible


def measure(method: str, honest: int, dishonest: int, runs: int) -> dict:
    x = census(binned=method in BINNED)
    name, value, how, fixed = CASES[method]
    published_params = {**fixed, name: value}
    start = time.perf_counter()
    alarms = [_one(method, value, published_params, x, 1000 + i, runs) for i in range(honest)]
    out = {"method": method, "parameter": name, "published": value, "honest": honest, "runs": runs,
           "false_alarm_rate": float(np.mean([a for a in alarms if a is not None])), "power": {}}
    verdicts = [_one(method, value, published_params, x, 1000 + i, runs, power_runs=10)
                for i in range(min(honest, POWER_RELEASES))]
    out["honest_inconclusive"] = float(np.mean([v == "inconclusive" for v in verdicts if v is not None]))
    for f in FACTORS:
        used = {"times": value * f, "divided": value / f, "randomized share": max(0.0, 1 - (1 - value) * f)}[how]
        if isinstance(value, int):
            used = int(used)
        caught = [_one(method, used, published_params, x, 5000 + 100 * f + i, runs) for i in range(dishonest)]
        valid = [c for c in caught if c is not None]
        out["power"][str(f)] = {"used": used, "releases": len(valid),
                                "power": float(np.mean(valid)) if valid else None}
    out["seconds"] = time.perf_counter() - start
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 honest and 10 dishonest releases, 20 runs")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", choices=sorted(CASES), action="append")
    args = parser.parse_args(argv)
    honest, dishonest, runs = (20, 10, 20) if args.quick else (100, 30, 30)
    methods = args.only or list(CASES)
    with ProcessPoolExecutor() as pool:
        results = list(pool.map(measure, methods, [honest] * len(methods), [dishonest] * len(methods),
                                [runs] * len(methods)))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'method':<32} {'published':<16} {'false alarms':>12}  " + "  ".join(f"{'x' + str(f):>16}" for f in FACTORS))
    for r in results:
        cells = []
        for f in FACTORS:
            p = r["power"][str(f)]
            cells.append(f"{p['used']!s:>6} " + ("   n/a" if p["power"] is None else f"{100 * p['power']:5.0f}%")
                         + f" ({p['releases']})")
        print(f"{r['method']:<32} {r['parameter'] + '=' + str(r['published']):<16} "
              f"{100 * r['false_alarm_rate']:>10.1f}%  " + "  ".join(f"{c:>16}" for c in cells)
              + f"  honest inconclusive {100 * r['honest_inconclusive']:.0f}%")
    print(f"\n{honest} honest releases per method, {dishonest} dishonest per factor, {runs} replay runs each; "
          "alpha 0.01 (Holm-corrected); power = share of dishonest releases found implausible", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
