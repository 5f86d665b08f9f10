"""The layout's rules: the dependency direction of SPEC section 0, the rooms of the verifier, no import cycle.

- a subject installs nothing that anonymizes: the verifier never imports the
  publisher, and importing it loads no user interface;
- the verifier's groups import downward only: base (errors, text, plots,
  version) < data < core < attacks < releases < front ends; front ends share
  code only through the front-end kit (``verifier.frontend``), except that the
  ``tui`` command of the CLI starts the TUI;
- the publisher imports public names only, and nothing of the verifier's
  command line or TUI;
- no import cycle among the modules, imports inside functions included;
- no class over 300 lines, no function over 90.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import publisher
import verifier

ROOT = Path(verifier.__file__).resolve().parent
PUBLISHER = Path(publisher.__file__).resolve().parent

RANK = {"base": 0, "data": 1, "core": 2, "attacks": 3, "distributed": 4, "releases": 5, "transparency": 5, "frontend": 6,
        "api": 7, "tui": 7,
        "page": 7,
        "cli": 8, "entry": 8}
BASE = {"errors", "text", "plots", "version", "console", "compiling", "lazy_names"}


def _modules() -> dict[str, Path]:
    out = {}
    for root in (ROOT, PUBLISHER):
        for path in root.rglob("*.py"):
            rel = path.relative_to(root.parent).with_suffix("")
            parts = list(rel.parts[:-1]) if rel.name == "__init__" else list(rel.parts)
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str) -> list[tuple[str, list[str], int]]:
    """Every import of a module, at module level or inside a function: (target module, names, line)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            names = [a.name for a in node.names]
            # `from pkg import module` imports the module itself
            submodules = [f"{base}.{n}" for n in names if f"{base}.{n}" in MODULES]
            found += [(s, [], node.lineno) for s in submodules]
            if len(submodules) < len(names):
                found.append((base, [n for n in names if f"{base}.{n}" not in MODULES], node.lineno))
    return found


def _group(name: str) -> str:
    parts = name.split(".")
    if len(parts) == 1:
        return "api"  # the package itself re-exports the API
    if parts[1] == "__main__":
        return "cli"  # python -m verifier runs the command line
    return "base" if parts[1] in BASE else parts[1]


def test_importing_verifier_loads_neither_publisher_nor_textual():
    code = "import sys, verifier, verifier.cli; print(__import__('json').dumps(sorted(sys.modules)))"
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout))
    assert "verifier" in loaded
    leaked = {m for m in loaded if m.split(".")[0] in {"publisher", "textual", "rich"}}
    assert not leaked, f"importing verifier loaded {sorted(leaked)}"


@pytest.mark.parametrize("tool", ["publisher", "verifier"])
def test_help_loads_no_method_and_no_heavy_library(tool):
    """``--help`` builds the parser only: pandas, scipy.stats, the methods, the TUI, numba and its kernels stay
    unloaded (it printed in 0.9 s when building it loaded every method; 0.3 s without; the kernels had crept back
    in by 2026-11-26, 1.2 s, docs/performance.md)."""
    code = (f"import sys, json; from {tool}.cli import build_parser; build_parser().format_help(); "
            "print(json.dumps(sorted(sys.modules)))")
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                           text=True).stdout))
    heavy = {m for m in loaded if m.split(".")[0] in {"pandas", "textual", "matplotlib", "dask", "jsonschema", "numba"}
             or m.startswith(("scipy.stats", "scipy.optimize", "publisher.methods.", "publisher.replay",
                              "verifier.core.permutation", "verifier.releases.audit"))}
    assert f"{tool}.cli" in loaded and heavy <= {"publisher.methods.names"}, sorted(heavy)


def test_no_verifier_module_imports_publisher():
    offenders = [f"{m}: {t}" for m in MODULES if m.startswith("verifier")
                 for t, _, _ in _imports(m) if t.split(".")[0] == "publisher"]
    assert offenders == []


def test_every_verifier_module_is_in_a_known_group():
    assert {_group(m) for m in MODULES if m.startswith("verifier")} <= set(RANK)


def test_verifier_groups_import_downward_only():
    offenders = []
    for name in (m for m in MODULES if m.startswith("verifier.")):
        mine = _group(name)
        for target, _, line in _imports(name):
            if not target.startswith("verifier") or target == "verifier.version":
                continue
            theirs = _group(target)
            front_end = RANK[theirs] >= RANK["frontend"] and theirs != mine
            allowed = (theirs == "frontend" and mine in ("cli", "tui", "api")) or (mine, theirs) in (("cli", "tui"),
                                                                                                    ("cli", "page"))
            if RANK[theirs] > RANK[mine] or (front_end and not allowed):
                offenders.append(f"{name}:{line} ({mine}) imports {target} ({theirs})")
    assert offenders == []


def test_publisher_uses_public_names_of_the_verifier_and_none_of_its_front_ends():
    offenders = []
    for name in (m for m in MODULES if m.startswith("publisher")):
        for target, names, line in _imports(name):
            if not target.startswith("verifier"):
                continue
            private = [p for p in target.split(".") + names if p.startswith("_")]
            if private or target.split(".")[:2] in (["verifier", "cli"], ["verifier", "tui"]):
                offenders.append(f"{name}:{line} imports {target} {names}")
    assert offenders == []


def _cycles() -> list[list[str]]:
    graph = {m: sorted({t for t, _, _ in _imports(m) if t in MODULES and t != m}) for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return components


def test_no_import_cycle_late_imports_included():
    assert _cycles() == []


def test_the_cycle_finder_finds_a_cycle(monkeypatch):
    """The check above can fail: a late import from a method module back into the registry is a cycle."""
    real = _imports

    def with_cycle(name):
        extra = [("publisher.methods.registry", [], 1)] if name == "publisher.methods.base" else []
        return real(name) + extra

    monkeypatch.setitem(globals(), "_imports", with_cycle)
    assert any({"publisher.methods.base", "publisher.methods.registry"} <= set(c) for c in _cycles())


@pytest.mark.parametrize("root", [ROOT, PUBLISHER], ids=["verifier", "publisher"])
def test_no_class_over_300_lines_and_no_function_over_90(root):
    offenders = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > (300 if isinstance(node, ast.ClassDef) else 90):
                    offenders.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name} ({lines} lines)")
    assert offenders == []


def test_the_old_flat_names_still_import_from_the_package():
    from verifier import RankSpace, compute_permuted_privacy, read_table, reverse_map, run_intruder  # noqa: F401


def test_every_cached_kernel_has_cache_files_of_its_own(tmp_path):
    """numba names a kernel's cache files after its function's name and first line, not its options: two kernels
    compiled from one function (the tree's parallel search and its serial twin) shared them, and whichever was
    compiled first after an install was loaded for both, so the parallel search ran on one core. Every cached
    kernel of the project, in a fresh process with an empty cache, has an index file no other kernel has."""
    code = """
import importlib, json, pkgutil, numba.core.registry, publisher, verifier
from numba.core.dispatcher import Dispatcher
paths = {}
for package in (verifier, publisher):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if ".tui" in info.name or ".page" in info.name or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, Dispatcher) and value._cache is not None and value.__module__ == module.__name__:
                paths.setdefault(value._cache._cache_file._index_path, {})[id(value)] = f"{info.name}.{name}"
print(json.dumps({path: sorted(names.values()) for path, names in paths.items()}))
"""
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    kernels = json.loads(out)
    assert len(kernels) >= 20  # the tree's, the spreads', the reader's, the publisher's
    assert [names for names in kernels.values() if len(names) > 1] == []  # (an alias is the same kernel)
    assert any(path.endswith(".nbi") and "_nearest_serial" in path for path in kernels)
