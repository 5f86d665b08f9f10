"""The ``publisher`` command line: what a data protector runs; one module per subcommand.

Exit codes as the verifier's (SPEC section 10): 0 done, 1 a check failed,
2 usage error, 3 invalid input data, 4 environment or I/O failure, 130
interrupted. A failure
prints one line ``FAIL: <path>: <REASON_CODE>: <sentence>`` on stderr.
"""

from __future__ import annotations

from typing import Sequence

from publisher.version import __version__
from publisher.cli import anonymize, assess, calibrate, demo, keygen, log, release, replay, schema
from verifier.frontend import new_parser, parse_or_fail, run_parsed

__all__ = ["build_parser", "main"]

COMMANDS = (schema, anonymize, assess, calibrate, keygen, release, replay, log, demo)


def build_parser():
    parser, sub, common = new_parser(
        "publisher", "Prepare an anonymized release of microdata that its subjects can check.", __version__)
    for command in COMMANDS:
        command.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_or_fail(build_parser(), argv)
    return args if isinstance(args, int) else run_parsed(args)
