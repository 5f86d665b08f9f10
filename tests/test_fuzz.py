"""A fuzz harness for the readers of untrusted input (issue 27, item 8).

Each reader takes arbitrary bytes (or arbitrary JSON) and must either
accept it or refuse it with the project's own error, which the command line
turns into one ``FAIL:`` line: never another exception. The suite runs a
modest number of examples; the campaign of docs/performance.md runs the same
tests with ``--hypothesis-profile=fuzz`` (many more examples, no deadline).
"""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from verifier.data.schema import Schema
from verifier.errors import VerifierError

SCHEMA = Schema.from_dict({"attributes": [
    {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
    {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
    {"name": "grade", "kind": "ordinal", "role": "sensitive", "categories": ["low", "mid", "high"]},
]})

#: JSON values, nested a little
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20)
#: text that looks like a CSV table some of the time
CSV_TEXT = st.one_of(
    st.binary(max_size=400),
    st.lists(st.lists(st.sampled_from(["age", "sex", "grade", "1", "-0", "1e400", "5e-324", "F", "M", "low", "",
                                       '"', "\ufeff", "NaN", "=1+1", "\x00", "12,5", " 3 "]), min_size=1, max_size=4),
             min_size=1, max_size=6).map(lambda rows: "\n".join(",".join(r) for r in rows).encode()),
)
#: the number of examples comes from the profile: the default in the suite, ``fuzz`` (conftest.py) for the campaign
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _accepts_or_refuses(call) -> None:
    try:
        call()
    except VerifierError as exc:
        assert exc.reason and isinstance(exc.message, str) and exc.diagnostic().startswith("FAIL: ")


@FUZZ
@given(raw=CSV_TEXT)
@example(raw=b"\xef\xbb\xbf")  # found by this harness: a file holding only a byte-order mark was an IndexError
@example(raw=b"\n\n")
def test_the_csv_reader(raw):
    from verifier.data.tables import read_table_bytes

    _accepts_or_refuses(lambda: read_table_bytes("x.csv", raw, SCHEMA))
    _accepts_or_refuses(lambda: read_table_bytes("x.csv", raw, None))


@FUZZ
@given(raw=st.binary(max_size=300))
def test_the_parquet_reader(raw):
    from verifier.data.tables import read_table_bytes

    _accepts_or_refuses(lambda: read_table_bytes("x.parquet", b"PAR1" + raw + b"PAR1", SCHEMA))


@FUZZ
@given(doc=st.one_of(JSON, st.dictionaries(st.sampled_from(["age", "sex", "grade", "other"]),
                                           st.one_of(st.text(max_size=6), st.integers(), st.floats(), st.none()))))
def test_the_record_reader(tmp_path_factory, doc):
    from verifier.releases.record import read_record

    path = tmp_path_factory.mktemp("record") / "me.json"
    path.write_text(json.dumps(doc))
    _accepts_or_refuses(lambda: read_record(path, SCHEMA))


@FUZZ
@given(raw=st.binary(max_size=200))
def test_the_record_reader_on_bytes(tmp_path_factory, raw):
    from verifier.releases.record import read_record

    for name in ("me.json", "me.csv"):
        path = tmp_path_factory.mktemp("record") / name
        path.write_bytes(raw)
        _accepts_or_refuses(lambda: read_record(path, SCHEMA))


ATTRIBUTE = st.fixed_dictionaries({"name": st.text(max_size=6), "kind": st.sampled_from(["numeric", "nominal",
                                                                                         "ordinal", "date", 5]),
                                   "role": st.sampled_from(["quasi_identifier", "sensitive", "other", None])},
                                  optional={"categories": st.lists(JSON, max_size=3)})


@FUZZ
@given(doc=st.one_of(JSON, st.fixed_dictionaries({"attributes": st.lists(ATTRIBUTE, max_size=4)}),
                     st.fixed_dictionaries({"fields": st.lists(JSON, max_size=3)})))
def test_the_schema_reader(tmp_path_factory, doc):
    from verifier.data.schema_file import load_schema

    path = tmp_path_factory.mktemp("schema") / "s.json"
    path.write_text(json.dumps(doc))
    _accepts_or_refuses(lambda: load_schema(path))


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    """A real release and its key, whose manifest the fuzzer rewrites."""
    from conftest import PAPER
    from publisher.cli import main as publisher

    root = tmp_path_factory.mktemp("fuzz-release")
    assert publisher(["keygen", "--out", str(root / "keys"), "--unencrypted"]) == 0
    assert publisher(["release", "--input", str(PAPER / "original.csv"), "--method", "rank_swapping", "--param",
                      "p=20", "--key", str(root / "keys" / "private.pem"), "--dataset-id", "f", "--seed", "1",
                      "--samples", "200", "--out", str(root / "release")]) == 0
    return root


def _manifest_leaves(node, path=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _manifest_leaves(value, (*path, key))
    else:
        yield path


@FUZZ
@given(data=st.data())
def test_the_manifest_checks(honest, data):
    """Any JSON at any place of a real manifest: accepted, or one SCHEMA_INVALID (never another exception)."""
    from verifier.releases.manifest_schema import validate_manifest

    statement = json.loads((honest / "release" / "manifest.json").read_text())
    paths = list(_manifest_leaves(statement))
    path = data.draw(st.sampled_from(paths))
    node = statement
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = data.draw(JSON)
    _accepts_or_refuses(lambda: validate_manifest(statement, "manifest.json"))


@FUZZ
@given(raw=st.one_of(st.binary(max_size=300), JSON.map(lambda v: json.dumps(v).encode()),
                     st.fixed_dictionaries({"payloadType": JSON, "payload": st.one_of(
                         JSON, st.binary(max_size=60).map(lambda b: base64.b64encode(b).decode())),
                         "signatures": st.lists(st.dictionaries(st.sampled_from(["sig", "keyid"]), JSON),
                                                max_size=2)}).map(lambda v: json.dumps(v).encode())))
def test_the_envelope_reader(honest, tmp_path_factory, raw):
    import shutil

    from verifier.releases.verification import ENVELOPE, load_public_key, verify_release

    release = tmp_path_factory.mktemp("env") / "release"
    shutil.copytree(honest / "release", release)
    (release / ENVELOPE).write_bytes(raw)
    key = load_public_key(honest / "keys" / "public.pem")
    with pytest.raises(VerifierError) as info:  # nothing but the real envelope verifies
        verify_release(release, key)
    assert info.value.exit_code == 1
