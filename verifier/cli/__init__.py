"""The ``verifier`` command line: one module per subcommand, its parser beside its handler.

Exit codes and the ``FAIL:`` line are the front-end kit's
(:mod:`verifier.frontend`). Results go to stdout, as a readable report or,
with ``--json``, as JSON.
"""

from __future__ import annotations

import sys
from typing import Sequence

from verifier.version import __version__
from verifier.cli import audit, check, demo, distance, intruder, page, reverse_map, tui, verify
from verifier.frontend import ExitCode, new_parser, run_parsed

__all__ = ["main", "build_parser", "ExitCode"]

COMMANDS = (reverse_map, distance, intruder, verify, audit, check, tui, page, demo)

#: commands whose stray words may be a subject's values: never echoed
_RECORD_COMMANDS = {"check", "tui"}


def build_parser():
    parser, sub, common = new_parser(
        "verifier", "Check an anonymized release: permutation distance, (d,v)-permuted privacy, reverse mapping.",
        __version__,
    )
    for command in COMMANDS:
        command.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        if getattr(args, "command", None) in _RECORD_COMMANDS or getattr(args, "subject_record", None):
            # argparse would echo the extra words, and they may be her values
            print(f"FAIL: -: RECORD_ON_COMMAND_LINE: {len(extra)} unexpected {'argument' if len(extra) == 1 else 'arguments'}, not shown; your record is "
                  "read from a file (--record) or typed in the TUI, never given on the command line, where the "
                  "shell history and the process list would keep it", file=sys.stderr)
            return ExitCode.USAGE
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return run_parsed(args)
