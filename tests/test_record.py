"""A subject's record file (SPEC section 1; spec/reliability.md case 33): strict, and never echoed."""

from __future__ import annotations

import pytest

from conftest import write
from verifier.errors import InvalidInputError
from verifier.releases.record import parse_number, parse_record, read_record
from verifier.data.schema import Schema

SCHEMA = Schema.from_dict(
    {
        "attributes": [
            {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
            {"name": "education", "kind": "ordinal", "role": "quasi_identifier",
             "categories": ["primary", "secondary", "tertiary"]},
            {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["flu", "cold"]},
        ]
    }
)


def test_json_and_csv_records(tmp_path):
    as_json = write(tmp_path / "me.json", '{"age": 34, "education": "secondary", "disease": "cold"}')
    as_csv = write(tmp_path / "me.csv", "disease,age,education\ncold,34,secondary\n")
    assert read_record(as_json, SCHEMA).tolist() == [34.0, 1.0, 1.0]
    assert read_record(as_csv, SCHEMA).tolist() == [34.0, 1.0, 1.0]
    assert parse_record({"age": "-1.5e1", "education": "primary", "disease": "flu"}, SCHEMA).tolist() == [-15.0, 0.0, 0.0]


CANARY = "777123"


@pytest.mark.parametrize(
    "age",
    ["1_000", "１２３", "٣", "nan", "infinity", "1e999", "−5", "5,5", "1e-400", "", " ", "0x10", "9007199254740993",
     f"{CANARY}abc"],
)
def test_bad_numbers_are_refused(age):
    with pytest.raises(InvalidInputError) as info:
        parse_record({"age": age, "education": "primary", "disease": "flu"}, SCHEMA, source="me.json")
    assert info.value.reason == "RECORD_VALUE_INVALID"
    line = info.value.diagnostic()
    assert line.startswith("FAIL: me.json: RECORD_VALUE_INVALID: field 'age'")
    # her value is never repeated back
    assert age.strip() == "" or age not in line


@pytest.mark.parametrize("value", [True, None, [1], {"a": 1}])
def test_non_numbers_are_refused(value):
    assert parse_number(value)[0] is None


@pytest.mark.parametrize(
    "text, reason, words",
    [
        ('{"age": 34, "education": "secondary"}', "RECORD_FIELD_MISSING", "'disease' is missing"),
        ('{"age": 34, "education": "secondary", "disease": "flu", "zip": "777123"}', "RECORD_FIELD_UNKNOWN", "'zip'"),
        ('{"age": 34, "education": "Secondary", "disease": "flu"}', "RECORD_VALUE_INVALID",
         "not one of its 3 categories (spelled exactly): 'primary', 'secondary', 'tertiary'"),
        ('{"age": 34, "education": 1, "disease": "flu"}', "RECORD_VALUE_INVALID", "as text"),
        ('{"age": NaN, "education": "primary", "disease": "flu"}', "RECORD_INVALID", "not a valid JSON record"),
        ('{"age": 777123e999, "education": "primary", "disease": "flu"}', "RECORD_INVALID", "out of range"),
        ('{"age": 1, "age": 2, "education": "primary", "disease": "flu"}', "RECORD_INVALID", "duplicate key"),
        ('[34, "secondary", "flu"]', "RECORD_INVALID", "one object"),
    ],
)
def test_bad_json_records(tmp_path, text, reason, words):
    path = write(tmp_path / "me.json", text)
    with pytest.raises(InvalidInputError) as info:
        read_record(path, SCHEMA)
    assert info.value.reason == reason and words in info.value.message
    assert CANARY not in info.value.message.replace("'zip'", "")


def test_csv_record_must_have_one_row(tmp_path):
    path = write(tmp_path / "me.csv", "age,education,disease\n34,primary,flu\n35,primary,flu\n")
    with pytest.raises(InvalidInputError, match="exactly one row"):
        read_record(path, SCHEMA)


def test_missing_record_file(tmp_path):
    with pytest.raises(InvalidInputError) as info:
        read_record(tmp_path / "none.json", SCHEMA)
    assert info.value.reason == "FILE_NOT_FOUND"


def test_a_long_list_of_categories_is_cut_in_the_error():
    """Issue 60, item 4: the error lists the valid categories, the first 20 of a long list and how many more."""
    from verifier.data.schema import Schema
    from verifier.releases.record import parse_record

    many = Schema.from_dict({"attributes": [{"name": "c", "kind": "nominal", "role": "quasi_identifier",
                                             "categories": [f"v{i:02d}" for i in range(30)]}]})
    with pytest.raises(InvalidInputError) as info:
        parse_record({"c": "w"}, many)
    assert info.value.message.endswith("'v17', 'v18', 'v19', and 10 more") and "'v20'" not in info.value.message
