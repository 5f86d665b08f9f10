"""The published manifest schema, enforced (issue 26, item 5).

Releases of every method validate with the ``jsonschema`` library and with
the independent ``check-jsonschema`` command; the schema in docs/ is the one
the verifier ships; every lie of a dishonest publisher's re-signed manifest
that the issue found (a garbage method list, empty claims, a k of "five", a
negative n_records, a creation time that is no date, an unknown claim, a
data file declared at 2**40 or 2**63 bytes) ends in one FAIL line, and a
Hypothesis test mutates honest manifests (drop, retype, enlarge, add fields)
and re-signs them: verify and check always end in one FAIL line, exit 1, and
never say "protected".
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import resign_statement
from test_every_method import METHODS, _release, world  # noqa: F401 (the fixture, shared)
from verifier.cli import main as verifier
from verifier.releases.manifest_schema import manifest_schema, model_problem, schema_problem
from verifier.releases.verification import MANIFEST

DOCS = Path(__file__).resolve().parents[1] / "docs" / "manifest.schema.json"


def _manifest(release: Path) -> dict:
    return json.loads((release / MANIFEST).read_bytes())


def test_the_published_schema_is_the_one_the_verifier_enforces():
    assert json.loads(DOCS.read_text()) == manifest_schema()
    jsonschema.Draft202012Validator.check_schema(manifest_schema())


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_every_method_validates_with_the_library_and_check_jsonschema(world, fmt, tmp_path):
    validator = jsonschema.Draft202012Validator(manifest_schema())
    copies = []
    for method in METHODS:
        statement = _manifest(_release(world, method, fmt))
        assert list(validator.iter_errors(statement)) == [], method
        assert schema_problem(statement) is None and model_problem(statement["predicate"]) is None
        copies.append(tmp_path / f"{method}.json")
        copies[-1].write_text(json.dumps(statement))
    tool = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    if not Path(tool).exists():
        pytest.skip("check-jsonschema is not installed (it comes with the test extras)")
    done = subprocess.run([tool, "--schemafile", str(DOCS), *map(str, copies)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def _fails_closed(capsys, release: Path, key: Path, record: Path, reason: str | None = "SCHEMA_INVALID") -> str:
    """verify and check each end in exactly one FAIL line, exit 1, and never say 'protected'."""
    lines = []
    for argv in (["verify", str(release), "--key", str(key)],
                 ["check", str(release), "--key", str(key), "--record", str(record), "--no-random-match"]):
        capsys.readouterr()
        code = verifier(argv)
        out, err = capsys.readouterr()
        fails = [line for line in err.splitlines() if line.startswith("FAIL:")]
        assert code == 1 and len(fails) == 1 and "Traceback" not in err, (argv[0], code, out, err)
        assert "protected" not in out.lower()  # no verdict (the FAIL line itself may name policy_levels.protected)
        assert not any(line.lower().startswith("protected") for line in err.splitlines())
        if reason is not None:
            assert f": {reason}: " in fails[0], fails[0]
        lines.append(fails[0])
    return lines[0]


LIES = {
    "garbage methods": (lambda p: p.update(methods=["garbage", 5]), "$.predicate.methods["),
    "empty claims": (lambda p: p.update(claims={}), "$.predicate.claims"),
    "k five": (lambda p: p["claims"].update(k="five"), "$.predicate.claims.k"),
    "negative n_records": (lambda p: p["claims"].update(n_records=-5), "$.predicate.claims.n_records"),
    "k of 5.0": (lambda p: p["claims"].update(k=5.0), "$.predicate.claims.k"),
    "not a date": (lambda p: p.update(createdAt="not-a-date"), "$.predicate.createdAt"),
    "month 13": (lambda p: p.update(createdAt="2026-13-01T00:00:00Z"), "$.predicate.createdAt"),
    "unknown claim": (lambda p: p["claims"].update(l_diversity=50), "$.predicate.claims"),
    "unknown method": (lambda p: p["methods"][0].update(method="k_anonymity_magic"), "$.predicate.methods[0].method"),
    "unknown parameter": (lambda p: p["methods"][0]["parameters"].update(relative_sd=0.5, secret="x"),
                          "$.predicate.methods[0].parameters"),
    "model of another family": (lambda p: p["claims"].update(model="generalized"), "$.predicate.claims"),
    "risk above one": (lambda p: p["claims"]["attribute_disclosure"]["disease"].update(max=1.5),
                       "$.predicate.claims.attribute_disclosure.disease.max"),
    "claim for a non-sensitive attribute": (
        lambda p: p["claims"]["attribute_disclosure"].update(age={"mode": "permutation", "max": 0.1, "mean": 0.1}),
        "$.predicate.claims.attribute_disclosure"),
    "missing sensitive claim": (lambda p: p["claims"].update(attribute_disclosure={}),
                                "$.predicate.claims.attribute_disclosure"),
    "k above n": (lambda p: p["claims"].update(k=p["claims"]["n_records"] + 1), "$.predicate.claims.k"),
    "bidi in the dataset id": (lambda p: p.update(datasetId="census\u202e2026"), "$.predicate.datasetId"),
    "invisible in the publisher": (lambda p: p.update(release_metadata={"publisher": "Office\u200bof Stats"}),
                                   "$.predicate.release_metadata.publisher"),
    "target of another family": (lambda p: p.update(targets={"min_l": 2}), "$.predicate.targets.min_l"),
    "target above one": (lambda p: p.update(targets={"max_linked_share": 1.5}), "$.predicate.targets.max_linked_share"),
    "target of a non-sensitive attribute": (lambda p: p.update(targets={"max_attribute_risk": {"age": 0.5}}),
                                            "$.predicate.targets.max_attribute_risk"),
    "size 2**50": (lambda p: None, "$.subject[0].annotations.size"),
}


@pytest.mark.parametrize("lie", list(LIES))
def test_each_lie_of_the_issue_is_one_schema_failure_with_its_path(world, lie, tmp_path, capsys):
    release = tmp_path / "release"
    shutil.copytree(_release(world, "additive_noise", "csv"), release)
    change, path = LIES[lie]

    def mutate(statement):
        change(statement["predicate"])
        if lie == "size 2**50":  # above the schema's 2**46 bytes (2**63, beyond 2**53, is not strict JSON at all)
            statement["subject"][0]["annotations"]["size"] = 2**50

    resign_statement(release, world / "keys" / "private.pem", mutate)
    line = _fails_closed(capsys, release, world / "keys" / "public.pem", world / "me.json")
    assert f"SCHEMA_INVALID: {path}" in line, line


def test_a_data_file_declared_at_a_terabyte_is_a_size_mismatch_read_as_nothing(world, tmp_path, capsys):
    release = tmp_path / "release"
    shutil.copytree(_release(world, "additive_noise", "csv"), release)
    resign_statement(release, world / "keys" / "private.pem",
                     lambda s: s["subject"][0]["annotations"].update(size=2**40))
    line = _fails_closed(capsys, release, world / "keys" / "public.pem", world / "me.json", reason="SIZE_MISMATCH")
    assert "the manifest says 1099511627776" in line


# ----------------------------------------------------------------------------- mutations of honest manifests


def _leaves(node, path=()):
    """Every leaf (scalar or list) of a JSON document with its path."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    else:
        yield path, node


def _nodes(node, path=()):
    """Every object of a JSON document with its path."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _nodes(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _nodes(value, (*path, i))


def _at(doc, path):
    for key in path:
        doc = doc[key]
    return doc


#: fields the schema requires, wherever the manifest has them
REQUIRED = [("_type",), ("subject",), ("predicate",), ("predicateType",), ("predicate", "datasetId"),
            ("predicate", "createdAt"), ("predicate", "releaseVersion"), ("predicate", "methods"),
            ("predicate", "claims"), ("predicate", "claims", "k"), ("predicate", "claims", "n_records"),
            ("predicate", "claims", "model"), ("predicate", "claims", "attribute_disclosure"),
            ("predicate", "withheld"), ("predicate", "toolkit"), ("predicate", "schema")]


def _mutation(statement: dict, kind: str, pick: int) -> None:
    if kind == "drop":
        path = REQUIRED[pick % len(REQUIRED)]
        del _at(statement, path[:-1])[path[-1]]
    elif kind == "retype":
        leaves = list(_leaves(statement))
        path, _ = leaves[pick % len(leaves)]
        _at(statement, path[:-1])[path[-1]] = {"unexpected": [1]}
    elif kind == "enlarge":
        strings = [p for p, v in _leaves(statement) if isinstance(v, str)]
        path = strings[pick % len(strings)]
        _at(statement, path[:-1])[path[-1]] = "x" * 100_001
    else:  # add an unknown field to any object
        nodes = list(_nodes(statement))
        _, node = nodes[pick % len(nodes)]
        node["zz_unknown_field"] = [12345]


@pytest.fixture(scope="module")
def honest(world):
    return {m: _release(world, m, "csv") for m in ("additive_noise", "randomized_response", "sd_k_anonymity",
                                                   "multi_sensitive_generalization", "random_attribute_replacement")}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["additive_noise", "randomized_response", "sd_k_anonymity",
                               "multi_sensitive_generalization", "random_attribute_replacement"]),
       kind=st.sampled_from(["drop", "retype", "enlarge", "add"]), pick=st.integers(0, 10_000))
def test_a_mutated_re_signed_manifest_always_ends_in_one_fail_line(world, honest, tmp_path_factory, capsys,
                                                                   method, kind, pick):
    release = tmp_path_factory.mktemp("mutated") / "release"
    shutil.copytree(honest[method], release)
    resign_statement(release, world / "keys" / "private.pem", lambda s: _mutation(s, kind, pick))
    _fails_closed(capsys, release, world / "keys" / "public.pem", world / "me.json", reason=None)


@pytest.mark.parametrize("dataset", ["census\u202e2026", "a\u200bb", "x\ufeff", "line\nbreak"])
def test_the_publisher_refuses_what_the_schema_refuses_in_a_dataset_id(world, dataset, tmp_path, capsys):
    from publisher.cli import main as publisher

    capsys.readouterr()
    assert publisher(["release", "--input", str(world / "x.csv"), "--schema", str(world / "one.json"), "--method",
                      "rank_swapping", "--param", "p=10", "--key", str(world / "keys" / "private.pem"),
                      "--dataset-id", dataset, "--out", str(tmp_path / "r")]) == 3
    assert "PARAMETER_INVALID: --dataset-id must be one line" in capsys.readouterr().err
