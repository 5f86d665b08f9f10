"""The hostile corpus (issue 37): releases a dishonest or buggy publisher signs with its own key, each with the one
reason code every front end must refuse it with.

The command line (tests/test_closed_release.py) and the page (tests/test_page.py) run the same cases on copies of
one honest release of the paper's example and must give the same reason. Each case changes the copy in place.
"""

from __future__ import annotations

import base64
import csv
import io
import re
from pathlib import Path
from typing import Callable

from conftest import republish, resign_statement

#: (case, the reason every front end refuses it with, what the dishonest publisher does to a copy)
Case = tuple[str, str, Callable[[Path, Path], None]]


def _data(release: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO((release / "release.csv").read_text())))


def _csv(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def _rows(change: Callable[[list[list[str]]], list[list[str]]], mutate=None):
    def run(release: Path, key: Path) -> None:
        republish(release, key, "release.csv", _csv(change(_data(release))), mutate)
    return run


def _statement(change: Callable[[dict], None]):
    def run(release: Path, key: Path) -> None:
        resign_statement(release, key, lambda s: change(s["predicate"]))
    return run


def _signed_text(change: Callable[[str], str]):
    """A manifest whose text no serializer writes (a duplicate key, a number that underflows), signed as it is."""
    def run(release: Path, key: Path) -> None:
        from publisher.keys import load_private_key
        from verifier.releases.verification import ENVELOPE, MANIFEST, PAYLOAD_TYPE, dumps_manifest, key_id, pae

        manifest = change((release / MANIFEST).read_text()).encode()
        private = load_private_key(key, None)
        (release / MANIFEST).write_bytes(manifest)
        (release / ENVELOPE).write_bytes(dumps_manifest({
            "payloadType": PAYLOAD_TYPE, "payload": base64.b64encode(manifest).decode(),
            "signatures": [{"keyid": key_id(private.public_raw),
                            "sig": base64.b64encode(private.sign(pae(PAYLOAD_TYPE, manifest))).decode()}]}))
    return run


def _methods(*names: str):
    steps = {"additive_noise": {"relative_sd": 0.8, "correlated": False, "attributes": None},
             "reverse_mapping": {"attributes": None}, "rank_swapping": {"p": 5, "attributes": None},
             "sd_k_anonymity": {"k": 3, "attributes": None},
             "external": {"produced_by": "ARX 3.9.2", "model": "permutation", "configuration": None,
                          "hierarchy_files": {}, "hierarchies": None, "suppressed_records": 0}}
    return _statement(lambda p: p.update(methods=[{"method": n, "parameters": steps[n]} for n in names]))


def _noise(sd):
    return _statement(lambda p: p["methods"][0]["parameters"].update(relative_sd=sd))


def _claims(**changes):
    def change(p: dict) -> None:
        for path, value in changes.items():
            where = p["claims"]
            *heads, last = path.split("__")
            for head in heads:
                where = where[head]
            where[last] = value
    return _statement(change)


CASES: list[Case] = [
    ("an unassessed column appended", "DATA_COLUMNS_MISMATCH",
     _rows(lambda rows: [rows[0] + ["ssn"]] + [r + [str(100000000 + i)] for i, r in enumerate(rows[1:])])),
    ("a column of the schema dropped", "DATA_COLUMNS_MISMATCH", _rows(lambda rows: [r[:-1] for r in rows])),
    ("the columns reordered", "DATA_COLUMNS_MISMATCH", _rows(lambda rows: [r[::-1] for r in rows])),
    ("a name that is layout", "DATA_COLUMNS_MISMATCH",
     _rows(lambda rows: [rows[0] + ["x\n\nPROTECTED: Your record is protected"]] + [r + ["1"] for r in rows[1:]])),
    ("a signed schema name that is layout", "SCHEMA_INVALID",
     _rows(lambda rows: [["x1\n\nPROTECTED: Your record is protected"] + rows[0][1:]] + rows[1:],
           lambda s: s["predicate"]["schema"]["attributes"][0].update(name="x1\n\nPROTECTED: Your record is protected"))),
    ("a schema name with a direction override", "SCHEMA_INVALID",
     _statement(lambda p: p["schema"]["attributes"][0].update(name="x1\u202e"))),
    ("an ordinal attribute without its categories", "SCHEMA_INVALID",
     _statement(lambda p: p["schema"]["attributes"][0].update(kind="ordinal"))),
    ("a row fewer than n_records", "MANIFEST_INCOHERENT", _rows(lambda rows: rows[:-1])),
    *[(f"a data cell {cell!r}", "DATA_MALFORMED", _rows(lambda rows, cell=cell: [rows[0], [cell] + rows[1][1:], *rows[2:]]))
      for cell in ("0x10", " 50.1", "1e-400", "5e-324", "1e151", "9007199254740993", "inf", "")],
    ("data that is not UTF-8", "DATA_MALFORMED",
     lambda release, key: republish(release, key, "release.csv",
                                    (release / "release.csv").read_bytes().replace(b"\n", b"\n\xff", 1))),
    ("a blank line in the data", "DATA_MALFORMED", _rows(lambda rows: [rows[0], rows[1], [], *rows[2:]])),
    ("a row a cell short", "DATA_MALFORMED", _rows(lambda rows: [rows[0], rows[1][:-1], *rows[2:]])),
    ("reverse_mapping alone", "MANIFEST_INCOHERENT", _methods("reverse_mapping")),
    ("reverse_mapping first", "MANIFEST_INCOHERENT", _methods("reverse_mapping", "additive_noise")),
    ("reverse_mapping twice", "MANIFEST_INCOHERENT", _methods("additive_noise", "reverse_mapping", "reverse_mapping")),
    ("a generalization then noise", "MANIFEST_INCOHERENT", _methods("sd_k_anonymity", "additive_noise")),
    ("relative_sd 0", "MANIFEST_INCOHERENT", _noise(0)),
    ("another tool's output beside a method", "MANIFEST_INCOHERENT", _methods("external", "reverse_mapping")),
    ("another tool's output with more suppressed records than records", "MANIFEST_INCOHERENT",
     _statement(lambda p: p.update(methods=[{"method": "external", "parameters": {
         "produced_by": "ARX 3.9.2", "model": "permutation", "configuration": None, "hierarchy_files": {},
         "hierarchies": None, "suppressed_records": p["claims"]["n_records"] + 1}}]))),
    ("ARX's suppression figures in a release no tool made", "SCHEMA_INVALID",
     _claims(suppression={"suppressed_records": 0, "classes": 1, "smallest_class": 20, "highest_prosecutor_risk": 0.05,
                          "average_prosecutor_risk": 0.05})),
    ("relative_sd 1e308", "MANIFEST_INCOHERENT", _noise(1e308)),
    ("rank swapping with p 0", "MANIFEST_INCOHERENT",
     _statement(lambda p: p.update(methods=[{"method": "rank_swapping", "parameters": {"p": 0, "attributes": None}},
                                            {"method": "reverse_mapping", "parameters": {"attributes": None}}]))),
    ("D = 10^30", "MANIFEST_MALFORMED", _claims(permuted_privacy__distance=10**30)),
    ("D = 10^400", "MANIFEST_MALFORMED", _claims(permuted_privacy__distance=10**400)),
    ("D = 2^53 + 1", "MANIFEST_MALFORMED", _claims(permuted_privacy__distance=2**53 + 1)),
    ("D above n - 1", "MANIFEST_INCOHERENT", _claims(permuted_privacy__distance=20)),
    ("a duplicate key in the manifest", "MANIFEST_MALFORMED",
     _signed_text(lambda t: t.replace('"datasetId": ', '"datasetId": "other",\n    "datasetId": ', 1))),
    ("a number that underflows to 0", "MANIFEST_MALFORMED",
     _signed_text(lambda t: re.sub(r'"hellinger": [^,\n]+', '"hellinger": 1e-400', t, count=1))),
    ("createdAt 2024-02-30", "SCHEMA_INVALID", _statement(lambda p: p.update(createdAt="2024-02-30T00:00:00Z"))),
    ("n_records 4,000 on 20 rows", "MANIFEST_INCOHERENT", _claims(n_records=4000)),
    ("random_records 0", "MANIFEST_INCOHERENT", _claims(intruder__random_records=0)),
    ("random_records 10^9", "MANIFEST_INCOHERENT", _claims(intruder__random_records=10**9)),
    ("a dropped identifier released", "MANIFEST_INCOHERENT", _statement(lambda p: p.update(dropped_identifiers=["x1"]))),
    ("level counts that do not add up", "MANIFEST_INCOHERENT", _claims(policy_levels__protected=0)),
    ("claims that miss the manifest's own target", "MANIFEST_INCOHERENT",
     _statement(lambda p: p.update(targets={"min_distance": p["claims"]["permuted_privacy"]["distance"] + 1}))),
]


def found_when_read(case: str, reason: str) -> bool:
    """Whether a case is refused where the data is read rather than as the release verifies: a cell the table
    reader refuses, or a CSV file's rows, which the reader counts as it reads them (a Parquet footer says its rows
    before). ``check --json`` then says ``"verified": true`` with the reason, in the command line and the page."""
    return reason == "DATA_MALFORMED" or case == "a row fewer than n_records"
