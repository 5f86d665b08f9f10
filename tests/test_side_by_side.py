"""Two computations side by side (verifier.core.side_by_side), and the assessment's two searches run that way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from verifier.attacks.assessment import Searches, assess
from verifier.core.side_by_side import kernels_share_threads, side_by_side
from verifier.data.schema import Schema

ROOT = Path(__file__).resolve().parents[1]


class OneAfterTheOther(Searches):
    """The plain twin: the same two searches, the permuted privacy first."""

    at_once = False


def test_each_result_comes_back_and_wait_gives_the_first_to_the_second():
    happened = []

    def first():
        time.sleep(0.05)
        happened.append("first")
        return 7

    def second(wait):
        happened.append("second")
        return wait() * 6

    assert side_by_side(first, second) == (7, 42)
    assert sorted(happened) == ["first", "second"]
    happened.clear()
    assert side_by_side(first, second, at_once=False) == (7, 42)
    assert happened == ["first", "second"]


def test_the_first_runs_on_another_thread_only_where_kernels_share_threads():
    here = threading.current_thread()
    ran_on, _ = side_by_side(threading.current_thread, lambda wait: None)
    assert (ran_on is not here) == kernels_share_threads()
    ran_on, _ = side_by_side(threading.current_thread, lambda wait: None, at_once=False)
    assert ran_on is here


@pytest.mark.parametrize("at_once", [True, False])
def test_an_exception_on_either_side_is_raised_once_both_have_ended(at_once):
    ended = []

    def slow():
        time.sleep(0.1)
        ended.append("first")
        return 1

    def fails(wait):
        raise KeyError("second")

    with pytest.raises(KeyError, match="second"):
        side_by_side(slow, fails, at_once=at_once)
    assert ended == ["first"]  # it was not left running

    def broken():
        raise ValueError("first")

    with pytest.raises(ValueError, match="first"):
        side_by_side(broken, lambda wait: ended.append("second"), at_once=at_once)


def _table(n: int, seed: int, *, permuted: bool) -> tuple[np.ndarray, np.ndarray, Schema]:
    """X with ties (small integers, a category) and Y: a per-column permutation of X (the intruder's Z is then Y,
    and his search is the permuted privacy's), or X with rounded noise (Z is not Y)."""
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.integers(0, 40, n), rng.normal(50, 10, n).round(1), rng.integers(0, 3, n)]).astype(float)
    if permuted:
        y = np.column_stack([x[rng.permutation(n), j] for j in range(3)])
        y[:, 2] = x[:, 2]
    else:
        y = x + np.column_stack([rng.normal(0, 4, n).round(), rng.normal(0, 5, n).round(1), np.zeros(n)])
    schema = Schema.from_dict({"attributes": [
        {"name": "a", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "b", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "c", "kind": "nominal", "role": "quasi_identifier", "categories": ["p", "q", "r"]},
    ]})
    return x, y, schema


@pytest.mark.parametrize("permuted", [True, False])
@pytest.mark.parametrize("n", [300, 12_000])
def test_the_assessment_side_by_side_is_the_assessment_one_after_the_other(permuted, n):
    """Above the compiled kernels' threshold (8,192 records) the two searches run the parallel kernels at once."""
    x, y, schema = _table(n, n + permuted, permuted=permuted)
    together = assess(x, y, schema, paired=True, samples=2_000)
    apart = assess(x, y, schema, paired=True, samples=2_000, searches=OneAfterTheOther())
    assert json.dumps(together.to_json()) == json.dumps(apart.to_json())
    assert together.intruder.reverse_mapping.z.tolist() == apart.intruder.reverse_mapping.z.tolist()
    if permuted:  # Z is Y: the intruder searched the permuted privacy's space, and its search was kept there
        assert np.array_equal(together.intruder.reverse_mapping.z, y)
        assert together.intruder.linkage.sets is together.space.__dict__["_last_search"][2][1]


def test_numbas_work_queue_runs_the_two_searches_one_after_the_other(tmp_path):
    """The work queue ends a process whose second thread launches a parallel kernel: under it the two searches
    take turns, and the figures are the same."""
    x, y, schema = _table(12_000, 3, permuted=False)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    (tmp_path / "schema.json").write_text(json.dumps(schema.to_dict()))
    script = (
        "import json, sys, numpy as np\n"
        "from verifier.attacks.assessment import assess\n"
        "from verifier.core.side_by_side import kernels_share_threads\n"
        "from verifier.data.schema import Schema\n"
        "d = sys.argv[1]\n"
        "schema = Schema.from_dict(json.load(open(d + '/schema.json')))\n"
        "a = assess(np.load(d + '/x.npy'), np.load(d + '/y.npy'), schema, paired=True, samples=2_000)\n"
        "import numba\n"
        "print(json.dumps({'shared': kernels_share_threads(), 'layer': numba.threading_layer(),"
        " 'assessment': a.to_json()}))\n"
    )
    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["layer"] == "workqueue" and out["shared"] is False
    here = assess(x, y, schema, paired=True, samples=2_000)
    assert json.dumps(out["assessment"]) == json.dumps(here.to_json())


def test_a_small_table_is_assessed_without_launching_a_parallel_kernel():
    """Below the compiled kernels' threshold the searches are the plain ones: nothing is run side by side, so
    nothing is compiled or loaded to decide whether it could be (numba chooses no threading layer). MDAV's kernel
    is compiled whatever the size, and is itself parallel: it is not asked here."""
    script = (
        "import numba, numpy as np\n"
        "from verifier.attacks.assessment import assess\n"
        "from verifier.data.schema import Schema\n"
        "rng = np.random.default_rng(4)\n"
        "x = rng.normal(size=(400, 2)).round(1)\n"
        "schema = Schema.from_dict({'attributes': [{'name': n, 'kind': 'numeric', 'role': 'quasi_identifier'}"
        " for n in 'ab']})\n"
        "assess(x, x + rng.normal(size=x.shape).round(1), schema, paired=True, samples=500)\n"
        "try:\n"
        "    print(numba.threading_layer())\n"
        "except ValueError:\n"
        "    print('none chosen')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "none chosen"
