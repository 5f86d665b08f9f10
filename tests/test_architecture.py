"""The dependency direction of SPEC section 0: a subject installs nothing that anonymizes."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import verifier

ROOT = Path(verifier.__file__).resolve().parent


def test_importing_verifier_loads_neither_publisher_nor_textual():
    code = "import sys, verifier, verifier.cli; print(__import__('json').dumps(sorted(sys.modules)))"
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout))
    assert "verifier" in loaded
    leaked = {m for m in loaded if m.split(".")[0] in {"publisher", "textual", "rich"}}
    assert not leaked, f"importing verifier loaded {sorted(leaked)}"


def test_no_verifier_module_imports_publisher():
    offenders = []
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "publisher"]
    assert offenders == []
