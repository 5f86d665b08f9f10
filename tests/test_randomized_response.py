"""Randomized response (paper 000): the parameter search of spec section 11, the method, the command line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import ADULT, adult_schema, write
from publisher.cli import main as publisher
from publisher.methods import make_method
from publisher.methods.randomized_response import contingency, optimal_keep_probabilities
from verifier.attacks.disclosure import rr_risk
from verifier.errors import InvalidInputError
from verifier.data.schema import Schema

T1B = np.array([[8, 40, 12], [12, 20, 8]]) / 100
T3D = np.array([[[5, 3, 2], [4, 9, 1], [1, 2, 7]], [[6, 1, 3], [2, 2, 6], [4, 1, 1]]]) / 60

# spec/attribute-disclosure.md section 14: "the optimizer's p agrees to about 1e-3; J agrees better"
OPTIMA = [
    (T1B, 2, "sensitive", (), 0.6853, 2.7245),
    (T1B, 2, "qi", (0.8101,), None, 1.8000),
    (T1B, 2, "both", (0.8755,), 0.9208, 1.6527),
    (T1B, 3, "both", (0.7113,), 0.6797, 9.2537),
    (T3D, 2, "qi", (0.9937, 0.8563), None, 1.4347),
    (T3D, 2, "both", (0.9937, 0.8563), 1.0, 1.4347),
    (T3D, 3, "qi", (0.8642, 0.7515), None, 2.9246),
    (T3D, 3, "both", (0.8803, 0.7776), 0.9404, 2.8464),
    (T3D, 2, "sensitive", (), 0.4872, 12.8552),
]


@pytest.mark.parametrize("pi, l, scope, p_qi, p_s, J", OPTIMA)
def test_optimal_keep_probabilities(pi, l, scope, p_qi, p_s, J):
    found = optimal_keep_probabilities(pi, scope, l)
    assert found.feasible
    assert found.utility_cost == pytest.approx(J, abs=2e-4)
    if p_qi:
        np.testing.assert_allclose(found.p_qi, p_qi, atol=1.5e-3)
    if p_s is not None:
        assert found.p_s == pytest.approx(p_s, abs=1.5e-3)
    # the constraint is active at the optimum: max risk = 1/l
    assert found.max_risk == pytest.approx(1 / l, abs=1e-8)
    assert rr_risk(pi, found.p_qi, found.p_s).max() <= 1 / l + 1e-8


@pytest.mark.parametrize("pi, scope", [(T1B, "sensitive"), (T1B, "qi"), (T3D, "sensitive")])
def test_infeasible_targets_are_reported(pi, scope):
    found = optimal_keep_probabilities(pi, scope, 3)
    assert not found.feasible and "even the most randomization" in found.reason


def test_target_already_met_needs_no_randomization():
    found = optimal_keep_probabilities(T1B, "both", 1.2)  # max risk .6667 <= 1/1.2
    assert found.feasible and found.p_s == 1.0 and found.p_qi == (1.0,) and found.utility_cost == 1.0


def _t1b_frame(copies: int = 20):
    rows = []
    for (g, d), n in np.ndenumerate(np.array([[8, 40, 12], [12, 20, 8]]) * copies):
        rows += [(["Male", "Female"][g], ["Cancer", "Flu", "Other"][d])] * n
    frame = pd.DataFrame(rows, columns=["gender", "disease"])
    schema = Schema.from_dict({"attributes": [
        {"name": "gender", "kind": "nominal", "role": "quasi_identifier", "categories": ["Male", "Female"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["Cancer", "Flu", "Other"]},
    ]})
    return frame, schema


def test_method_keeps_values_with_the_given_probability():
    frame, schema = _t1b_frame(copies=100)  # 20,000 records
    method = make_method("randomized_response", {"keep_probabilities": "gender:0.8,disease:0.7"})
    result = method.apply(frame, schema, random_state=3)
    kept_g = np.mean(result.table["gender"] == frame["gender"])
    kept_d = np.mean(result.table["disease"] == frame["disease"])
    se = lambda p: 4 * np.sqrt(p * (1 - p) / len(frame))
    assert abs(kept_g - 0.8) < se(0.8) and abs(kept_d - 0.7) < se(0.7)
    # a moved value goes to each other category equally often
    moved = result.table["disease"][frame["disease"] == "Cancer"]
    moved = moved[moved != "Cancer"].value_counts(normalize=True)
    assert abs(moved["Flu"] - 0.5) < 0.05
    np.testing.assert_allclose(contingency(frame, schema, ["gender"], "disease"), T1B)
    risk = result.metrics["attribute_disclosure"]["disease"]
    assert risk["max"] == pytest.approx(0.3736, abs=5e-5)  # T1b-hyp, RR-Both .8/.7
    assert risk["mean"] == pytest.approx(float(np.sum(T1B * rr_risk(T1B, [.8], .7))))
    assert method.parameters()["keep_probabilities"] == {"gender": 0.8, "disease": 0.7}


def test_method_computes_optimal_parameters_for_l():
    frame, schema = _t1b_frame()
    method = make_method("randomized_response", {"l": "2", "scope": "both"})
    result = method.apply(frame, schema, random_state=1)
    used = method.parameters()["keep_probabilities"]
    assert used["gender"] == pytest.approx(0.8755, abs=1.5e-3) and used["disease"] == pytest.approx(0.9208, abs=1.5e-3)
    assert result.metrics["attribute_disclosure"]["disease"]["max"] == pytest.approx(0.5, abs=1e-8)
    with pytest.raises(InvalidInputError) as info:
        make_method("randomized_response", {"l": "3", "scope": "qi"}).apply(frame, schema, random_state=1)
    assert info.value.reason == "TARGET_INFEASIBLE"


@pytest.mark.parametrize("params, reason", [
    ({}, "PARAMETER_MISSING"),
    ({"keep_probabilities": "1"}, "PARAMETER_DEGENERATE"),
    ({"keep_probabilities": "1.5"}, "PARAMETER_INVALID"),
    ({"l": "0.5"}, "PARAMETER_INVALID"),
    ({"l": "2", "scope": "everything"}, "PARAMETER_INVALID"),
    ({"l": "2", "keep_probabilities": "0.8"}, "PARAMETER_MISSING"),
])
def test_bad_parameters(params, reason):
    with pytest.raises(InvalidInputError) as info:
        make_method("randomized_response", params)
    assert info.value.reason == reason


def test_keep_probability_below_one_over_d_is_refused():
    frame, schema = _t1b_frame()
    with pytest.raises(InvalidInputError, match="below 1/2"):
        make_method("randomized_response", {"keep_probabilities": "gender:0.3"}).apply(frame, schema, random_state=0)


def test_cli_anonymize_json_reports_the_computed_keep_probabilities(tmp_path, capsys):
    frame, schema = _t1b_frame()
    x = tmp_path / "x.csv"
    frame.to_csv(x, index=False)
    s = write(tmp_path / "schema.json", json.dumps(schema.to_dict()))
    code = publisher(["anonymize", "--input", str(x), "--schema", str(s), "--method", "randomized_response",
                      "--param", "l=2", "--param", "scope=both", "--seed", "5", "--out", str(tmp_path / "y.csv"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    keep = out["parameters"]["keep_probabilities"]
    assert set(keep) == {"gender", "disease"} and keep["gender"] == pytest.approx(0.8755, abs=1.5e-3)
    assert out["metrics"]["attribute_disclosure"]["disease"]["max"] == pytest.approx(0.5, abs=1e-8)


def test_adult_end_to_end(tmp_path, capsys):
    schema = adult_schema(tmp_path, numeric_age=False)
    capsys.readouterr()
    y = tmp_path / "y.csv"
    code = publisher(["anonymize", "--input", str(ADULT), "--schema", str(schema), "--method", "randomized_response",
                      "--param", "l=1.5", "--param", "scope=both", "--seed", "9", "--keep-order", "--out", str(y), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["metrics"]["attribute_disclosure"]["salary-class"]["max"] <= 1 / 1.5 + 1e-8
    assert set(out["parameters"]["keep_probabilities"]) == {"marital-status", "race", "sex", "salary-class"}
    reconstruction = out["metrics"]["reconstruction"]
    assert reconstruction["chi_square"] >= 0 and (reconstruction["kl"] is None or reconstruction["kl"] >= 0)
    code = publisher(["assess", "--original", str(ADULT), "--anonymized", str(y), "--schema", str(schema), "--paired",
                      "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and "salary-class" in result["attribute_disclosure"]
