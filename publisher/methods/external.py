"""The ``external`` step: a release's cells made by another tool (ARX, sdcMicro, mu-ARGUS), not by this one.

Its parameters publish everything the tool was given (Kerckhoffs' principle):
the tool and version, the configuration file (its SHA-256, and the file
itself in base64), each ARX hierarchy file as it is with its SHA-256, the
trees the release's cells are read with (``hierarchies.json``), the model
its cells fit (:mod:`publisher.external_output`), the records it
suppressed, and the transition matrix of each column it post-randomized
(:mod:`publisher.transition_matrix`), under which its release is judged as
randomized response. It is the chain's only step; the release's row shuffle is the
one draw of this tool's randomness. ``publisher replay`` cannot rerun it,
and the audit lists it as unchecked, saying so.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any, Mapping

from verifier.data.arx_hierarchy import ArxHierarchy, read_arx_hierarchy
from publisher.external_output import ToolOutput, read_tool_output
from publisher.transition_matrix import modelled_columns, post_randomized, read_transition_matrix
from publisher.methods.base import Method, MethodResult
from verifier.data.bounded_files import read_bounded
from verifier.data.tables import Table
from verifier.errors import InvalidInputError
from verifier.text import has_layout, literal

__all__ = ["EXTERNAL", "ExternalTool"]

EXTERNAL = "external"


class ExternalTool(Method):
    """The output of another tool, published as it was made (no parameter of this tool changes it)."""

    name = EXTERNAL
    kinds = ("numeric", "ordinal", "nominal")
    parsers: dict = {}  # never made from --method: publisher release --anonymized reads the tool's output
    seed_use = "none of the tool's own draws (unknown here); only the release's row shuffle"
    deterministic = True

    def __init__(self, output: ToolOutput, *, produced_by: str, configuration: tuple[str, bytes] | None,
                 trees: Mapping[str, ArxHierarchy], tree_files: Mapping[str, bytes],
                 matrices: Mapping[str, list[list[float]]] | None = None, kept: tuple[str, ...] = ()):
        self.output, self.produced_by, self.configuration = output, produced_by, configuration
        self.trees, self.tree_files = dict(trees), dict(tree_files)
        self.matrices, self.kept_as_is = dict(matrices or {}), tuple(kept)

    @classmethod
    def read(cls, original: Table, anonymized: str | Path, *, produced_by: str, configuration: str | Path | None = None,
             hierarchies: Mapping[str, str | Path] | None = None,
             transition_matrices: Mapping[str, str | Path] | None = None) -> "ExternalTool":
        """The step of the tool's output file ``anonymized`` made from ``original``, with the tool's configuration
        file, its ARX hierarchy files by column and the transition matrix file of each column it post-randomized
        (each refused, naming file, column and row, if it does not fit)."""
        if not produced_by.strip() or has_layout(produced_by) or len(produced_by) > 200:
            raise InvalidInputError("--produced-by names the tool and its version on one line of at most 200 "
                                    "characters (\"ARX 3.9.2\")", reason="PARAMETER_INVALID")
        names = original.schema.names
        trees, files = {}, {}
        for column, path in (hierarchies or {}).items():
            if column not in names:
                raise InvalidInputError(f"--hierarchy {literal(column)}: not a column of the schema (its columns: "
                                        f"{', '.join(map(literal, names))})", path=str(path), reason="COLUMN_MISSING")
            files[column] = read_bounded(path, "arx_hierarchy")
            trees[column] = read_arx_hierarchy(column, Path(path).name, files[column])
        config = None
        if configuration is not None:
            config = (Path(configuration).name, read_bounded(configuration, "configuration"))
        modelled = {a.name: a for a in modelled_columns(original.schema)}
        matrices = {}
        for column, path in (transition_matrices or {}).items():
            attr = modelled.get(column)
            if attr is None:
                raise InvalidInputError(f"--transition-matrix {literal(column)}: not a categorical quasi-identifier or "
                                        "sensitive column of the schema", path=str(path), reason="COLUMN_MISSING")
            matrices[column] = read_transition_matrix(str(path), read_bounded(path, "transition_matrix"), attr)
        raw = read_bounded(anonymized, "table")
        output = read_tool_output(str(anonymized), raw, original, trees)
        kept: tuple[str, ...] = ()
        if matrices:
            output = post_randomized(str(anonymized), output, original, matrices)
            kept = tuple(name for name in modelled if name not in matrices)
        return cls(output, produced_by=produced_by.strip(), configuration=config, trees=trees, tree_files=files,
                   matrices=matrices, kept=kept)

    def parameters(self) -> dict[str, Any]:
        config = None
        if self.configuration is not None:
            name, raw = self.configuration
            config = {"name": name, "sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw),
                      "base64": base64.b64encode(raw).decode("ascii")}
        files = {column: {"name": tree.name, "sha256": hashlib.sha256(self.tree_files[column]).hexdigest(),
                          "text": self.tree_files[column].decode("utf-8-sig")}
                 for column, tree in self.trees.items()}
        generalized = self.output.model == "generalized"
        out = {"produced_by": self.produced_by, "model": self.output.model, "configuration": config,
               "hierarchy_files": files,
               "hierarchies": {c: t.tree() for c, t in self.trees.items()} if generalized and self.trees else None,
               "suppressed_records": self.output.suppressed}
        if self.matrices:
            out.update(transition_matrices=self.matrices, kept_as_is=list(self.kept_as_is))
        return out

    def apply(self, table, schema, *, random_state, original=None) -> MethodResult:
        return MethodResult(self.output.table.copy(), {"suppressed_records": self.output.suppressed})
