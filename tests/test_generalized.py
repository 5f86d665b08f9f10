"""Assessing generalized releases (SPEC sections 6 and 8 for k-anonymous and masked tables)."""

from __future__ import annotations

import pandas as pd
import pytest

from publisher.methods import make_method
from verifier.attacks.generalized import Cell, assess_generalized, parse_cell
from verifier.data.schema import Schema

from test_sd_anonymity import SCHEMA, SD4  # the paper 001 running example


def test_parse_cells():
    assert parse_cell("[25,45]", True) == Cell(lo=25, hi=45)
    assert parse_cell("[20,40)", True).contains(39.9) and not parse_cell("[20,40)", True).contains(40)
    assert parse_cell("33", True).contains(33)
    assert parse_cell("{Japan,Korea}", False).contains("Korea") and not parse_cell("Japan", False).contains("Korea")


def test_sd_release_assessed_like_the_method_reports_it():
    frame = pd.DataFrame(SD4, columns=["age", "gender", "nat", "disease"])
    result = make_method("sd_k_anonymity", {"k": "3"}).apply(frame, SCHEMA, random_state=0)
    published = {c: [str(v) for v in result.table[c]] for c in frame.columns}
    original = {c: frame[c].tolist() for c in frame.columns}
    a = assess_generalized(original, published, SCHEMA)
    assert a["k"] == 4 and a["classes"] == 2 and a["discernibility"] == 32
    assert a["data_utility"] == pytest.approx(result.metrics["data_utility"])  # 14/27
    # the group risk: candidates are the released records whose published QIs contain hers
    assert a["attribute_disclosure"]["disease"]["max"] == pytest.approx(result.metrics["attribute_disclosure"]["disease"]["max"])
    assert a["attribute_disclosure"]["disease"]["mean_candidates"] == 4.0
    assert a["permuted_privacy"] is None and "do not apply" in a["note"]


def test_masked_sensitive_values_count_per_leaf():
    schema = Schema.from_dict({"attributes": [
        {"name": "g", "kind": "nominal", "role": "quasi_identifier"},
        {"name": "d", "kind": "nominal", "role": "sensitive"}]})
    tree = {"d": {"type": "categorical", "tree": {"*": [{"Resp": ["Asthma", "Cold"]}, "Flu"]}}}
    original = {"g": ["a", "a", "a", "a"], "d": ["Asthma", "Cold", "Flu", "Flu"]}
    published = {"g": ["a", "a", "a", "a"], "d": ["Resp", "Resp", "Flu", "Flu"]}
    a = assess_generalized(original, published, schema, hierarchies=tree)
    # Asthma: two "Resp" cells give 1/2 each, over 4 candidates -> 1/4; Flu -> 2/4
    assert a["attribute_disclosure"]["d"]["max"] == pytest.approx(0.5)
    assert a["attribute_disclosure"]["d"]["mean"] == pytest.approx((0.25 + 0.25 + 0.5 + 0.5) / 4)
    assert a["sa_distortion_ratio"] == pytest.approx((1 / 3 + 1 / 3) / 4)
