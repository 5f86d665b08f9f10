"""The ``verifier`` command line: one module per subcommand, its parser beside its handler.

Exit codes and the ``FAIL:`` line are the front-end kit's
(:mod:`verifier.frontend`). Results go to stdout, as a readable report or,
with ``--json``, as JSON.
"""

from __future__ import annotations

from typing import Sequence

from verifier.version import __version__
from verifier.cli import audit, check, demo, distance, intruder, joint, log, page, reverse_map, tui, verify, witness
from verifier.errors import UsageError
from verifier.frontend import ExitCode, new_parser, parse_or_fail, run_parsed

__all__ = ["main", "build_parser", "ExitCode"]

COMMANDS = (reverse_map, distance, intruder, verify, audit, check, joint, tui, page, demo, witness, log)

#: commands whose stray words may be a subject's values: never echoed
_RECORD_COMMANDS = {"check", "joint", "tui"}


def build_parser():
    parser, sub, common = new_parser(
        "verifier", "Check an anonymized release: permutation distance, (d,v)-permuted privacy, reverse mapping.",
        __version__,
    )
    for command in COMMANDS:
        command.register(sub, common)
    return parser


def _record_words(args, extra: list[str]) -> UsageError | None:
    """Stray words after a record command may be her values: argparse would echo them, this never does."""
    if getattr(args, "command", None) in _RECORD_COMMANDS or getattr(args, "subject_record", None):
        return UsageError(f"{len(extra)} unexpected {'argument' if len(extra) == 1 else 'arguments'}, not shown; "
                          "your record is read from a file (--record) or typed in the TUI, never given on the command "
                          "line, where the shell history and the process list would keep it",
                          reason="RECORD_ON_COMMAND_LINE")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_or_fail(build_parser(), argv, _record_words)
    return args if isinstance(args, int) else run_parsed(args)
