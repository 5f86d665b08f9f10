"""A generalized release under ARX's class-level models (issue 50, item 4): enhanced beta-likeness and
delta-disclosure privacy (base 2), class by class over every value a class holds, in the protector's summary and
the audit; the fast path over (class, value) pairs held to the class-by-class loop on random tables."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from publisher.cli import main as publisher
from verifier.attacks.class_models import _violations_by_class, _violations_of_values, class_model_violations
from verifier.attacks.classes import read_published, value_shares
from verifier.cli import main as verifier
from verifier.data.schema import Attribute, Schema

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = Schema([Attribute("age", "numeric", "quasi_identifier"),
                 Attribute("d", "nominal", "sensitive", categories=("a", "b", "c"))])


def test_each_class_is_judged_over_every_value_it_holds():
    # p(a) = 6/10, p(b) = 3/10, p(c) = 1/10
    ages = ["[1,2]"] * 4 + ["[3,4]"] * 4 + ["[5,6]"] * 2
    values = ["a", "a", "a", "a", "a", "b", "b", "c", "a", "b"]
    published = read_published(SCHEMA, ["age", "d"], [ages, values])
    found = class_model_violations(published)["d"]
    # [1,2]: a at 1 (gain 2/3 > min(1, -ln 0.6) = 0.51): violates beta-likeness; |log2(1/0.6)| = 0.74 < 1
    # [3,4]: a 1/4, b 1/2, c 1/4: c's gain (0.25 - 0.1) / 0.1 = 1.5 > 1 and log2(2.5) = 1.32 >= 1: both
    # [5,6]: a 1/2, b 1/2: b's gain 0.67 < min(1, 1.2); |log2(0.5/0.3)| = 0.74, |log2(0.5/0.6)| = 0.26: neither
    assert found["classes"] == 3
    assert found["enhanced_beta_likeness"] == {"beta": 1.0, "classes": 2, "records": 8}
    assert found["delta_disclosure"] == {"delta": 1.0, "log_base": 2, "classes": 1, "records": 4}
    # the parameters move the verdicts: at beta = 2 only [1,2] (whose bound is -ln 0.6 whatever beta) violates
    assert class_model_violations(published, beta=2.0)["d"]["enhanced_beta_likeness"]["classes"] == 1
    assert class_model_violations(published, delta=0.5)["d"]["delta_disclosure"]["classes"] == 3
    assert math.log2(1 / 0.6) >= 0.5


@pytest.mark.parametrize("seed", range(20))
def test_the_pairs_of_class_and_value_are_the_class_by_class_loop(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    ages = [f"[{a},{a + 1}]" for a in rng.integers(0, 6, n)]  # ties: several rows per class
    values = [("a", "b", "c")[i] for i in rng.integers(0, 3 if seed % 2 else 2, n)]
    published = read_published(SCHEMA, ["age", "d"], [ages, values])
    labels = published.class_labels()
    sizes = np.bincount(labels)
    p = value_shares(published, "d")
    for beta, delta in ((1.0, 1.0), (0.3, 0.4), (4.0, 2.5)):
        fast = _violations_of_values(published, "d", labels, sizes, p, beta, delta)
        loop = _violations_by_class(published, "d", labels, p, beta, delta)
        assert fast is not None and all(np.array_equal(f, s) for f, s in zip(fast, loop)), (seed, beta, delta)


def test_masked_cells_take_the_class_by_class_path():
    published = read_published(SCHEMA, ["age", "d"], [["[1,2]"] * 2 + ["[3,4]"] * 2, ["a", "{a,b}", "b", "c"]])
    labels = published.class_labels()
    assert _violations_of_values(published, "d", labels, np.bincount(labels), value_shares(published, "d"), 1.0,
                                 1.0) is None
    found = class_model_violations(published)["d"]  # p(a) = 1.5/4, p(b) = 1.5/4, p(c) = 1/4
    # [1,2]: a at 0.75, a gain of 1 > min(1, -ln 0.375) = 0.98, and log2(2) = 1; [3,4]: c at 0.5, a gain of 1, not
    # above min(1, -ln 0.25) = 1, but log2(2) = 1 >= 1
    assert found["enhanced_beta_likeness"]["classes"] == 1 and found["delta_disclosure"]["classes"] == 2


def test_the_audit_and_the_protectors_summary_report_arxs_class_models(tmp_path, capsys):
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    capsys.readouterr()
    assert publisher(["release", "--input", str(ROOT / "experiments" / "data" / "adult_sample_3000.csv"), "--schema",
                      str(ROOT / "docs" / "examples" / "adult-one-sensitive.json"), "--method", "sd_k_anonymity",
                      "--param", "k=5", "--seed", "1", "--samples", "100", "--key",
                      str(tmp_path / "keys" / "private.pem"), "--dataset-id", "sd", "--out",
                      str(tmp_path / "sd")]) == 0
    summary = [line for line in capsys.readouterr().out.splitlines() if "class-level models" in line]
    key = str(tmp_path / "keys" / "public.pem")
    assert verifier(["audit", str(tmp_path / "sd"), "--key", key, "--json"]) == 0
    models = json.loads(capsys.readouterr().out)["class_models"]["salary-class"]
    assert models["enhanced_beta_likeness"]["classes"] > 0 and models["delta_disclosure"]["records"] > 0
    line = (f"\"salary-class\" under ARX's class-level models: enhanced beta-likeness (beta = 1): "
            f"{models['enhanced_beta_likeness']['classes']:,} of {models['classes']:,} classes violate it "
            f"({models['enhanced_beta_likeness']['records']:,} records); delta-disclosure (delta = 1, log base 2): "
            f"{models['delta_disclosure']['classes']:,} classes ({models['delta_disclosure']['records']:,} records)")
    assert summary == ["    " + line]
    assert verifier(["audit", str(tmp_path / "sd"), "--key", key]) == 0
    assert line in capsys.readouterr().out.splitlines()
