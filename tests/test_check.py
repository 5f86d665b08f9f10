"""verifier check: a subject's report on her own record against a verified release (issue 7's CLI part)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import pytest

from conftest import write
from verifier.cli import main

GOLDEN = Path(__file__).parent / "data" / "golden"


def test_check_on_the_golden_release(tmp_path, capsys):
    record = write(tmp_path / "me.json", '{"x1": 100.87, "x2": 902.21, "x3": 5108.54}')
    code = main(["check", str(GOLDEN / "release"), "--key", str(GOLDEN / "public.pem"), "--record", str(record), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {"distance", "matches", "variances", "p_value", "attribute_disclosure"} <= set(out)
    assert out["claimed"]["distance"] == 1 and out["claim_holds"] is True
    assert out["distance"] >= out["claimed"]["distance"]
    assert 0 < out["p_value"] <= 1 and out["random_method"] == "exhaustive" and out["random_records"] == 8000
    assert out["verdict"]["level"] == "protected" and out["log"] is None
    # no log proof given: one notice that sets no level, that nothing shows everyone sees this release
    assert [(f["rule"], f["severity"]) for f in out["verdict"]["findings"]] == [("unwitnessed", "notice")]
    assert out["verdict"]["lines"][1].startswith("This release was checked without a log proof")
    assert out["verdict"]["headline"] == (
        'Your record is protected under the verdict policy "permuted-privacy default" (version 1): a random record '
        f"matches as closely as yours {out['p_value'] * 100:.4g}% of the time.")
    assert out["verdict"]["rule"] is None and out["verdict"]["policy"]["name"] == "permuted-privacy default"
    assert out["verdict"]["lines"][2] == "The publisher's claims hold for your record."


def test_check_fails_closed_and_never_echoes_the_record(tmp_path, capsys):
    record = write(tmp_path / "me.json", '{"x1": "777123abc", "x2": 902.21, "x3": 5108.54}')
    code = main(["check", str(GOLDEN / "release"), "--key", str(GOLDEN / "public.pem"), "--record", str(record)])
    err = capsys.readouterr().err
    assert code == 3 and "RECORD_VALUE_INVALID" in err and "777123" not in err
    assert main(["check", str(GOLDEN / "release"), "--record", str(record)]) == 2
    assert "NO_TRUSTED_KEY" in capsys.readouterr().err


def test_verdict_levels_and_headlines():
    """protected, at risk (a broken claim, the test not run), exposed (linked; published unchanged)."""
    from verifier.releases.facts import open_release
    from verifier.releases.subject import check_record, prepare, random_match

    prepared = prepare(open_release(str(GOLDEN / "release"), str(GOLDEN / "public.pem")))
    mixed = check_record(prepared, np.array([100.87, 902.21, 5108.54]), whole_space=True)
    tested = random_match(prepared, mixed)
    assert mixed.distance == 3 and mixed.verdict(tested).level == "protected"
    untested = mixed.verdict()  # the same record, the random-match test not run: nothing clears her
    assert untested.level == "at_risk" and untested.headline.startswith("The random-match test was not run")
    exact = check_record(prepared, prepared.values[0], whole_space=True)  # a released record's own values
    assert exact.distance == 0 and exact.claim_holds() is False and exact.unchanged
    linked = random_match(prepared, exact)
    assert linked.confidently_linked and linked.p_value == pytest.approx(1 / 8000 * linked.random.counts[0])
    verdict = exact.verdict(linked)
    # the policy's order: linked heads, then published unchanged, then the broken claim
    assert verdict.level == "exposed" and verdict.headline.startswith("An intruder can tell your match from chance")
    assert [f.rule for f in verdict.findings] == ["linked", "published_unchanged", "publisher_promise_broken",
                                                  "unwitnessed"]
    assert verdict.findings[0].text.startswith("An intruder can tell your match from chance: a random record matches "
                                               "as closely as yours only ")
    assert "The publisher's claims do NOT hold for your record: Your closest released record is 0 ranks from " \
        "yours; the publisher claims every record is at least 1 ranks from its closest match." in verdict.lines
    # with no claim of D, an exact match is exposed all the same: her level does not rest on claims
    near = dataclasses.replace(exact, claimed_distance=0, claimed_v=None)
    assert near.claim_holds() is True and near.verdict().level == "exposed"  # published unchanged
    moved = dataclasses.replace(mixed, claimed_distance=None, claimed_v=None)
    assert moved.verdict(tested).level == "protected"  # no claim of D: her p-value decides, not the missing claim
    assert moved.verdict(tested).lines[2] == "The release makes no claim to check your record against."


WARM_UP_PROBE = """
import numpy as np, pyarrow as pa
from verifier.core import warm_up
from verifier.core.permutation import RankSpace, SingleRecord, compute_distances, compute_window_spread
from verifier.core.warm_up import KernelWarmUp
from verifier.data import decimal_cells
kernels = list(warm_up.WARMED)
before = [len(k.signatures) for k in kernels]
KernelWarmUp().wait()
warmed = [len(k.signatures) for k in kernels]
rng = np.random.default_rng(0)
from verifier.compiling import PLAIN_BELOW
y = rng.normal(size=(PLAIN_BELOW + 952, 3))  # above PLAIN_BELOW, no ties: the compiled tree and spreads answer
space = RankSpace(y)
compute_distances(space, y[:50])
space.query_blocks(y)  # above PLAIN_BELOW queries: the compiled query blocks
qlo, qhi = space.query_blocks(y[:50])
space.tree.distances(qlo, qhi)
compute_window_spread(space, qlo, qhi, 40)
SingleRecord(y, None, y[0]).spread_at(40)
from verifier.core.permutation import _numeric_spread  # a wide window in a tied block: summed by runs
tied = np.sort(np.concatenate([np.full(3000, 1e4 + v) for v in range(3)] + [np.zeros(10000)]))
from verifier.core.ranks import ColumnBlocks
_numeric_spread(ColumnBlocks.from_sorted(tied), np.array([10002], np.int64), np.array([13501], np.int64), [0])
cells = pa.array([str(v) for v in y[:, 0]])
decimal_cells._first_bad(*decimal_cells._buffers(cells.slice(1)))
decimal_cells._long_integers(*decimal_cells._buffers(cells), 16)
print(before, warmed, [len(k.signatures) for k in kernels])
"""


def test_kernel_warm_up_loads_the_kernels_real_calls_use():
    """In a fresh process the warm-up loads each kernel once, with the types the commands then call it with."""
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "verifier.core.warm_up"], check=True)  # the build's kernels cached
    subprocess.run([sys.executable, "-c", "from verifier.core.warm_up import warm_up; warm_up()"], check=True)
    out = subprocess.run([sys.executable, "-c", WARM_UP_PROBE], capture_output=True, text=True, check=True).stdout
    before, warmed, after = (json.loads(part + "]") for part in out.strip()[:-1].split("] "))
    assert before == [0] * len(before) and len(before) == 12
    assert warmed == [1] * 12
    assert after == warmed  # nothing compiled or loaded again


COLD_PROBE = """
import json, numpy as np
from verifier.core import kdtree, warm_up, window
from verifier.core.permutation import RankSpace, compute_distances, compute_window_spread
from verifier.core.warm_up import KernelWarmUp
kernels = warm up.WARMED
from verifier.compiling import PLAIN_BELOW
warming = KernelWarmUp(PLAIN_BELOW + 952)
cold = warming.cold
warming.wait()
y = np.random.default_rng(0).normal(size=(PLAIN_BELOW + 952, 3))
space = RankSpace(y)
compute_distances(space, y[:50])
qlo, qhi = space.query_blocks(y[:50])
compute_window_spread(space, qlo, qhi, 40)
used = (*kdtree.WARMED, window.prefix_table, window.window_moments)  # no window here needs two passes
print(json.dumps([cold, [sum(k.stats.cache_misses.values()) for k in used], [len(k.signatures) for k in used]]))
""".replace("warm up.WARMED", "warm_up.WARMED")


def test_a_cold_warm_up_compiles_each_kernel_once_in_one_of_two_processes(tmp_path):
    """With numba's cache empty (a fresh install), a helper process compiles the tree build's kernels while
    this one compiles the search's and the spreads': afterwards each kernel is in this process, compiled here
    once or loaded from the helper's cache, never compiled twice."""
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", COLD_PROBE], capture_output=True, text=True, check=True, env=env)
    cold, misses, signatures = json.loads(out.stdout)
    assert cold is True and signatures == [1] * 6
    assert misses == [0, 0, 0, 1, 1, 1]  # the search and the spreads compiled here; the helper's build was loaded


@pytest.mark.parametrize("ties", [False, True])
def test_her_record_in_the_whole_rank_space_equals_linear_selection(tmp_path, ties):
    """check_record(whole_space=True), used when the random-match test follows, gives the same report to the bit."""
    from publisher.cli import main as publisher
    from verifier.releases.subject import check_record, prepare
    from verifier.releases.verification import load_public_key, verify_release

    rng = np.random.default_rng(7 + ties)
    x = np.round(rng.normal(size=(500, 3)) * [1, 10, 100], 2)
    if ties:
        x[:, 0] = rng.integers(0, 4, 500)
        x[:, 2] = np.round(x[:, 2], -2)
    write(tmp_path / "x.csv", "a,b,c\n" + "".join(f"{a!r},{b!r},{c!r}\n" for a, b, c in x.tolist()))
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    assert publisher(["release", "--input", str(tmp_path / "x.csv"), "--method", "additive_noise", "--param",
                      "relative_sd=0.5", "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "t",
                      "--seed", "3", "--out", str(tmp_path / "rel")]) == 0
    prepared = prepare(verify_release(tmp_path / "rel", load_public_key(tmp_path / "keys" / "public.pem")))
    records = [x[0], x[17], np.floor(x[3]) + 0.5, x[5] + 1e4, x[9] - 1e4]
    for record in records:
        linear = check_record(prepared, record).to_json(None)
        whole = check_record(prepared, record, whole_space=True).to_json(None)
        assert json.dumps(whole, sort_keys=True) == json.dumps(linear, sort_keys=True)
