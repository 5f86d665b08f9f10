"""``publisher schema``: draft the schema of an original table (SPEC section 1)."""

from __future__ import annotations

import argparse
import json
import sys

from verifier.data.frictionless import table_schema
from verifier.data.tables import read_csv_cells, write_atomic
from verifier.frontend import add_command, output_width
from verifier.frontend.output import FittedStream
from verifier.frontend.output_paths import check_output
from verifier.text import literal, plural

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "schema", run=run, data_stdout=True, help="draft the schema of an original table",
        description="Draft a schema (SPEC section 1) from a CSV file: all-number columns are numeric, others "
        "nominal with categories by decreasing frequency. Every column is a quasi-identifier unless named "
        "with --sensitive or --other.",
    )
    p.add_argument("--input", required=True, metavar="X.csv")
    p.add_argument("--sensitive", action="append", default=[], metavar="COLUMN", help="a sensitive column (repeatable)")
    p.add_argument("--other", action="append", default=[], metavar="COLUMN", help="a column that is neither (repeatable)")
    p.add_argument("--format", choices=("project", "frictionless"), default="project", dest="schema_format",
                   help="project: {\"attributes\": [...]} (default); frictionless: a Frictionless Table Schema "
                   "with the roles and kinds in its permuted_privacy:role and permuted_privacy:kind field properties")
    p.add_argument("--missing", choices=("refuse", "category"), default="refuse",
                   help="a missing cell (empty, NA, ?...): refuse (default) names its column and rows; category "
                   "keeps each missing spelling as a category of its own, listed in the schema (never in a column "
                   "whose other cells are numbers)")
    p.add_argument("--out", metavar="schema.json", help="write here (default: stdout)")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")


def run(args: argparse.Namespace) -> int:
    from publisher.schema_infer import infer_schema, missing_cells  # loaded when run, not for --help

    check_output(args.out, inputs=[args.input], force=args.force)
    cells = read_csv_cells(args.input)  # read once: for the schema and for the notes
    schema = infer_schema(args.input, sensitive=args.sensitive, other=args.other, missing=args.missing, cells=cells)
    for name, (count, spellings) in missing_cells(*cells).items():
        print(f"note: column {literal(name)!r}: {plural(count, 'missing cell')} kept as the "
              f"{'category' if len(spellings) == 1 else 'categories'} {', '.join(repr(literal(s)) for s in spellings)} "
              "(--missing category)", file=sys.stderr)
    drafted = table_schema(schema) if args.schema_format == "frictionless" else schema.to_dict()
    text = json.dumps(drafted, indent=2, ensure_ascii=False) + "\n"
    if args.out:
        write_atomic(args.out, lambda handle: handle.write(text))
        width = output_width()  # stdout is this command's data when there is no --out, so it fits its summary itself
        stream = FittedStream(sys.stdout, width) if width else sys.stdout
        stream.write("\n".join(summary_lines(args.out, schema)) + "\n")
        stream.flush()
    else:
        sys.stdout.write(text)
    return 0



ROLE_WORDS = {"quasi_identifier": "quasi-identifiers", "sensitive": "sensitive", "other": "other columns"}


def summary_lines(out: str, schema) -> list[str]:
    """What the draft says, one line per role (a 15-column table was one line of 403 characters), each column with
    its kind."""
    lines = [f"wrote {out}: {plural(len(schema.attributes), 'column')}"]
    for role, words in ROLE_WORDS.items():
        named = [f"{literal(a.name)} ({a.kind})" for a in schema.attributes if a.role == role]
        if named:
            lines.append(f"  {words}: {', '.join(named)}")
    return lines + ["review the kinds, roles and category orders before you publish it"]
