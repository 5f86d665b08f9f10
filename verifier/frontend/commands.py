"""Subcommand parsers and the one way a command runs: exit codes and the ``FAIL:`` line (SPEC section 10).

====  ==========================================================
0     all checks passed
1     a check or verification failed
2     usage error (bad arguments)
3     invalid input data (a table, a schema, a record)
4     environment or I/O failure (cannot read or write a file)
====  ==========================================================

A failure prints one line on stderr, ``FAIL: <path>: <REASON_CODE>: <sentence>``;
a traceback only with ``--verbose``.
"""

from __future__ import annotations

import argparse
import enum
import os
import sys
from typing import Callable

from verifier.errors import VerifierError
from verifier.text import LiteralStream

__all__ = ["ExitCode", "add_command", "new_parser", "run_parsed"]

EXIT_CODES = "Exit codes: 0 passed, 1 a check failed, 2 usage error, 3 invalid input data, 4 I/O failure."


class ExitCode(enum.IntEnum):
    OK = 0
    CHECK_FAILED = 1
    USAGE = 2
    INPUT_ERROR = 3
    IO_ERROR = 4


def new_parser(prog: str, description: str, version: str) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction,
                                                                      argparse.ArgumentParser]:
    """The top parser of a command line, its subcommand group, and the options every subcommand shares."""
    common = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    # SUPPRESS: a subcommand must not reset a -v given before it
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="show a traceback on failure")
    parser = argparse.ArgumentParser(prog=prog, allow_abbrev=False, description=description, epilog=EXIT_CODES,
                                     parents=[common])
    parser.add_argument("--version", action="version", version=f"%(prog)s {version}")
    sub = parser.add_subparsers(required=True, dest="command", metavar="COMMAND")
    return parser, sub, common


def add_command(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, name: str, *,
                run: Callable[[argparse.Namespace], int], help: str, description: str, epilog: str | None = None,
                literal_stdout: bool = True) -> argparse.ArgumentParser:
    """A subcommand whose handler is ``run``.

    ``literal_stdout`` writes every control character the command prints as an
    escape (names come from publishers); the TUI, which draws the terminal
    itself, turns it off.
    """
    p = sub.add_parser(name, parents=[common], allow_abbrev=False, help=help, description=description, epilog=epilog)
    p.set_defaults(func=run, literal_stdout=literal_stdout)
    return p


def run_parsed(args: argparse.Namespace) -> int:
    """Run a parsed subcommand: ``FAIL:`` line and exit code on the project's own errors.

    Only the project's own errors (and running out of memory) are caught; a
    traceback is shown for them only with ``--verbose``.
    """
    args.verbose = getattr(args, "verbose", False)
    stdout = sys.stdout
    if getattr(args, "literal_stdout", True):
        sys.stdout = LiteralStream(stdout)
    try:
        return int(args.func(args))
    except VerifierError as exc:
        if args.verbose:
            raise
        print(exc.diagnostic(), file=sys.stderr)
        return exc.exit_code
    except MemoryError:
        if args.verbose:
            raise
        print("FAIL: -: OUT_OF_MEMORY: not enough memory for this table", file=sys.stderr)
        return ExitCode.IO_ERROR
    except BrokenPipeError:  # the reader went away (`| head`): the command did not finish, so it did not pass
        os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())  # nothing left to flush at exit
        print("FAIL: -: OUTPUT_CLOSED: the output was closed before the command finished", file=sys.stderr)
        return ExitCode.IO_ERROR
    finally:
        sys.stdout = stdout
