"""Several sensitive attributes (paper 002; spec/methods.md section 2.1): test vectors MSA-1 and MSA-2."""

from __future__ import annotations

import math

import pytest

from verifier.attacks.diversity import alpha_requirement, multi_diversity, negative_disclosure, qs_diversity, single_diversity
from verifier.errors import InvalidInputError

# Paper 002, Table 1: EC1 = rows 1-6 ([10,30], M), EC2 = rows 7-12 ([30,60], F)
ROWS = [
    ("[10,30]", "M", "Albinism", "Albinism"), ("[10,30]", "M", "Albinism", "No"), ("[10,30]", "M", "Albinism", "No"),
    ("[10,30]", "M", "Asthma", "Asthma"), ("[10,30]", "M", "Pneumonia", "Asthma"), ("[10,30]", "M", "Pneumonia", "Asthma"),
    ("[30,60]", "F", "Haemophilia", "Hepatitis"), ("[30,60]", "F", "Cold", "No"), ("[30,60]", "F", "Cold", "No"),
    ("[30,60]", "F", "Liver cancer", "Pneumonia"), ("[30,60]", "F", "Liver cancer", "Hepatitis"),
    ("[30,60]", "F", "Liver cancer", "Hepatitis"),
]
TABLE = {name: [r[k] for r in ROWS] for k, name in enumerate(("age", "sex", "disease", "household"))}
QI, SA = ["age", "sex"], ["disease", "household"]


@pytest.mark.parametrize("alpha", [1 / 2, 2 / 3])
def test_msa_1(alpha):
    single = single_diversity(TABLE, QI, SA, alpha)
    assert single.passed and single.max_confidence == pytest.approx(1 / 2)
    assert single.per_attribute == {"disease": pytest.approx(1 / 2), "household": pytest.approx(1 / 2)}
    for target in SA:
        qs = qs_diversity(TABLE, QI, SA, target, alpha)
        assert not qs.passed and qs.max_confidence == 1.0
    assert not multi_diversity(TABLE, QI, SA, alpha).passed


def test_msa_1_alpha_one_passes_everything():
    assert single_diversity(TABLE, QI, SA, 1.0).passed and multi_diversity(TABLE, QI, SA, 1.0).passed


def test_qs_groups_of_household_given_disease():
    # EC1: Albinism -> {Albinism, No, No}: No at 2/3 is that group's worst
    sub = {k: v[:3] for k, v in TABLE.items()}
    assert qs_diversity(sub, QI, SA, "household", 0.9).max_confidence == pytest.approx(2 / 3)


def test_msa_2_negative_disclosure():
    report = negative_disclosure(TABLE, QI, SA, 1 / 2)
    ec1, ec2 = report["classes"]
    assert ec1["confidence"] == 1.0 and ec1["flagged"]
    assert ec2["confidence"] == pytest.approx(3 / 4) and ec2["flagged"]
    assert report["flagged"] == 2
    # the paper's example: knowing "Disease is not Albinism" leaves Household = Asthma
    assert ec1["known"] == {"attribute": "disease", "not": "Albinism"}
    assert ec1["disclosed"] == {"attribute": "household", "value": "Asthma"}
    assert ec2["known"] == {"attribute": "disease", "not": "Cold"}
    assert ec2["disclosed"] == {"attribute": "household", "value": "Hepatitis"}


def test_missing_values_are_a_group_of_their_own():
    # four records with QI (30, a) and one with a missing QI: the true smallest class has 1 record
    table = {"age": [30, 30, 30, math.nan, 30], "job": ["a", "a", "a", "b", "a"], "s": ["x", "y", "z", "x", "w"]}
    check = alpha_requirement(table, ["age", "job"], "s", 0.5)
    assert not check.passed and check.max_confidence == 1.0
    assert math.isnan(check.worst["group"]["age"])


def test_bad_alpha():
    with pytest.raises(InvalidInputError):
        single_diversity(TABLE, QI, SA, 0.0)
