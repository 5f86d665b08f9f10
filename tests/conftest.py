"""Shared fixtures: the paper's running example, shipped inside the package."""

from __future__ import annotations

import base64
import functools
import json
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from publisher.keys import load_private_key
from verifier.data.tables import read_table
from verifier.releases.verification import ENVELOPE, MANIFEST, PAYLOAD_TYPE, dumps_manifest, key_id, pae

#: the fuzz campaign of docs/performance.md: pytest tests/test_fuzz.py --hypothesis-profile=fuzz
settings.register_profile("fuzz", max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))

PAPER = Path(str(resources.files("verifier") / "data" / "paper"))


@pytest.fixture(scope="session")
def paper_paths() -> dict[str, Path]:
    """Paper 003, Table 1: X (original), Y (masked), Z (reverse-mapped)."""
    return {name: PAPER / f"{name}.csv" for name in ("original", "masked", "reverse_mapped")}


@pytest.fixture(scope="session")
def paper(paper_paths):
    return {name: read_table(path) for name, path in paper_paths.items()}


def write(path: Path, content: str | bytes) -> Path:
    """Write a test input file and return its path."""
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


#: the Adult subset the categorical tests read, shipped with its attribution (tests/data/adult/README.md)
ADULT = Path(__file__).resolve().parent / "data" / "adult" / "adult_subset_2000.csv"
#: ARX 3.9.2's outputs of the Adult sample, shipped with their provenance (docs/examples/arx/README.md)
ARX_SHIPPED = Path(__file__).resolve().parents[1] / "docs" / "examples" / "arx"


@functools.lru_cache(maxsize=1)
def arx_folder() -> Path:
    """The folder ARX's outputs were made from, as the tests read it: ``input.csv`` (the Adult sample's six columns,
    in its order, which ARX read), each ``arx_*.csv`` output, ``hierarchies/`` and the README of ARX's figures, all
    from what the repository ships; written once per test process into a folder of its own."""
    import atexit
    import csv
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="arx-"))
    atexit.register(shutil.rmtree, folder, True)  # gone with the test process
    sample = Path(__file__).resolve().parents[1] / "experiments" / "data" / "adult_sample_3000.csv"
    columns = ["age", "education", "marital-status", "race", "sex", "salary-class"]
    with sample.open() as source, (folder / "input.csv").open("w", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([row[c] for c in columns] for row in csv.DictReader(source))
    (folder / "hierarchies").mkdir()
    for path in ARX_SHIPPED.iterdir():
        if path.name.startswith("adult_hierarchy_") or path.name == "LICENSE-ARX":
            shutil.copy(path, folder / "hierarchies" / path.name)
        elif path.name.startswith("arx_") or path.name == "README.md":
            shutil.copy(path, folder / path.name)
    return folder
#: the Adult columns that are neither quasi-identifiers nor sensitive in the categorical tests
ADULT_OTHERS = ("fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week", "native-country",
                "occupation", "workclass", "relationship", "education")


def adult_schema(folder: Path, *, numeric_age: bool = True, sensitive: tuple[str, ...] = ("salary-class",),
                 others: tuple[str, ...] = ADULT_OTHERS) -> Path:
    """A schema of the Adult subset drafted by ``publisher schema``: by default QIs age (unless dropped),
    marital status, race and sex, and salary class sensitive."""
    from publisher.cli import main as publisher

    out = folder / "adult-schema.json"
    others = tuple(others) + (() if numeric_age else ("age",))
    code = publisher(["schema", "--input", str(ADULT), *[a for c in sensitive for a in ("--sensitive", c)],
                      *[a for c in others for a in ("--other", c)], "--missing", "category", "--out", str(out)])
    assert code == 0
    return out


def clinic(folder: Path, rows: int) -> list[str]:
    """A small clinic of ``rows`` random patients (age, sex and race quasi-identifiers, disease sensitive) in
    ``x.csv`` with its ``schema.json``; returns the table's lines, header first."""
    import numpy as np

    rng = np.random.default_rng(40)
    lines = ["age,sex,race,disease"] + [f"{rng.integers(18, 80)},{rng.choice(['F', 'M'])},{rng.choice(['a', 'b', 'c'])},"
                                        f"{rng.choice(['flu', 'cancer', 'hiv', 'none'])}" for _ in range(rows)]
    (folder / "x.csv").write_text("\n".join(lines) + "\n")
    (folder / "schema.json").write_text(json.dumps({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
        {"name": "race", "kind": "nominal", "role": "quasi_identifier", "categories": ["a", "b", "c"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["cancer", "flu", "hiv", "none"]}]}))
    return lines


def ward_folder(folder: Path, diseases: list[str]) -> Path:
    """A hospital ward's ``schema.json`` (age and sex quasi-identifiers, ``diseases`` the sensitive categories) and
    an unencrypted key pair in ``keys/``."""
    from publisher.cli import main as publisher

    (folder / "schema.json").write_text(json.dumps({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": diseases}]}))
    assert publisher(["keygen", "--out", str(folder / "keys"), "--unencrypted"]) == 0
    return folder


def resign_statement(release: Path, private_key: Path, mutate) -> None:
    """A dishonest publisher: change the signed statement and sign it again with the real key."""
    statement = json.loads((release / MANIFEST).read_bytes())
    mutate(statement)
    manifest = dumps_manifest(statement)
    key = load_private_key(private_key, None)
    signature = key.sign(pae(PAYLOAD_TYPE, manifest))
    (release / MANIFEST).write_bytes(manifest)
    (release / ENVELOPE).write_bytes(dumps_manifest({
        "payloadType": PAYLOAD_TYPE, "payload": base64.b64encode(manifest).decode(),
        "signatures": [{"keyid": key_id(key.public_raw), "sig": base64.b64encode(signature).decode()}]}))


@pytest.fixture(autouse=True)
def _a_state_folder_of_its_own(monkeypatch, tmp_path_factory):
    """The checkpoints a verifier remembers (verifier/transparency/history.py) go to a folder of the test session,
    never the caller's home: a log made afresh by one run would otherwise contradict the memory of the last."""
    monkeypatch.setenv("PERMUTED_PRIVACY_STATE", str(tmp_path_factory.mktemp("state")))


@pytest.fixture(autouse=True)
def _no_caller_terminal_width(monkeypatch):
    """Tests pass whatever the caller's terminal: an exported COLUMNS (or LINES) would wrap every command's output
    to it. A test that depends on a width sets it itself."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


def republish(release: Path, private_key: Path, name: str, content: bytes, mutate=None) -> None:
    """A dishonest publisher: replace one listed file, list its new digest and size (in the data package too,
    for a data file), change the statement if asked, and sign it all again with the real key."""
    import hashlib

    (release / name).write_bytes(content)
    package_file = release / "datapackage.json"
    if package_file.exists() and (name.startswith("release") or name == "weights.csv"):
        package = json.loads(package_file.read_bytes())
        for resource in package["resources"]:
            if resource.get("path") == name:
                resource.update(hash="sha256:" + hashlib.sha256(content).hexdigest(), bytes=len(content))
        package_file.write_bytes(dumps_manifest(package))

    def relist(statement: dict) -> None:
        for entry in statement["subject"]:
            listed = (release / entry["name"]).read_bytes()
            entry["digest"]["sha256"] = hashlib.sha256(listed).hexdigest()
            entry["annotations"]["size"] = len(listed)
        if mutate is not None:
            mutate(statement)

    resign_statement(release, private_key, relist)


def one_person_fewer(levels: dict) -> None:
    """Signed level counts made to count one person fewer, coherently (issue 59, item 2): the largest level loses
    one, the shares follow their counts, and the rule that decided that person's level loses one too."""
    from verifier.releases.policy import default_policy

    fewer = max(("exposed", "at_risk", "protected"), key=lambda level: levels[level])
    levels[fewer] -= 1
    levels["checked"] -= 1
    levels["records"] -= 1
    levels.update(at_risk_share=levels["at_risk"] / levels["checked"], exposed_share=levels["exposed"] / levels["checked"])
    if fewer != "protected":
        level_of = {r.id: r.level for r in default_policy().rules}
        rule = next(r for r, c in levels["by_rule"].items() if level_of[r] == fewer and c)
        levels["by_rule"] = {r: c - (r == rule) for r, c in levels["by_rule"].items() if c - (r == rule)}


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    """xdist writes its "bringing up nodes..." status on a line of its own at each stage when the output is not a
    terminal (twice in a run's log, issue 60, item 7); the run's progress says the same, so it is left out."""
    reporter = config.pluginmanager.get_plugin("terminaldistreporter")
    if reporter is not None:
        reporter.ensure_show_status = lambda: None
