"""verifier check: a subject's report on her own record against a verified release (issue 7's CLI part)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write
from verifier.cli import main

GOLDEN = Path(__file__).parent / "data" / "golden"


def test_check_on_the_golden_release(tmp_path, capsys):
    record = write(tmp_path / "me.json", '{"x1": 100.87, "x2": 902.21, "x3": 5108.54}')
    code = main(["check", str(GOLDEN / "release"), "--key", str(GOLDEN / "public.pem"), "--record", str(record), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {"distance", "matches", "variances", "p_value", "attribute_disclosure"} <= set(out)
    assert out["claimed"]["distance"] == 1 and out["claim_holds"] is True
    assert out["distance"] >= out["claimed"]["distance"]
    assert 0 < out["p_value"] <= 1 and out["random_method"] == "exhaustive" and out["random_records"] == 8000
    assert out["verdict"][0] == "Your record is protected as the publisher claims."


def test_check_fails_closed_and_never_echoes_the_record(tmp_path, capsys):
    record = write(tmp_path / "me.json", '{"x1": "777123abc", "x2": 902.21, "x3": 5108.54}')
    code = main(["check", str(GOLDEN / "release"), "--key", str(GOLDEN / "public.pem"), "--record", str(record)])
    err = capsys.readouterr().err
    assert code == 3 and "RECORD_VALUE_INVALID" in err and "777123" not in err
    assert main(["check", str(GOLDEN / "release"), "--record", str(record)]) == 2
    assert "NO_TRUSTED_KEY" in capsys.readouterr().err
