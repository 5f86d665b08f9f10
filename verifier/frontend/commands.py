"""Subcommand parsers and the one way a command runs: exit codes and the ``FAIL:`` line (SPEC section 10).

====  ==========================================================
0     all checks passed
1     a check or verification failed
2     usage error (bad arguments)
3     invalid input data (a table, a schema, a record)
4     environment or I/O failure (cannot read or write a file, a
      full disk or a closed output)
130   interrupted (Ctrl-C, SIGINT, or SIGTERM)
====  ==========================================================

A failure prints one line on stderr, ``FAIL: <path>: <REASON_CODE>: <sentence>``;
a traceback only with ``--verbose``. An interrupt ends the command with
``FAIL: -: INTERRUPTED: ...``: every file being written is written beside its
target and moved into place only when complete, so an interrupt leaves it absent.
"""

from __future__ import annotations

import argparse
import enum
import errno
import os
import signal
import sys
import threading
import warnings
from typing import Callable, Sequence

from verifier.console import end_if_console
from verifier.core.interrupts import interrupt, raise_if_interrupted, start_watching
from verifier.errors import UsageError, VerifierError
from verifier.frontend.collection import fewer_collections
from verifier.frontend.output import FittedStream, output_width, say_failure
from verifier.text import LiteralStream, NameNormalized, literal

__all__ = ["ExitCode", "OneLineParser", "add_command", "new_parser", "parse_or_fail", "run_parsed"]

EXIT_CODES = ("Exit codes: 0 passed, 1 a check failed, 2 usage error, 3 invalid input data, 4 I/O failure "
              "(a full disk or a closed output included), 130 interrupted (Ctrl-C or SIGTERM).")


class ExitCode(enum.IntEnum):
    OK = 0
    CHECK_FAILED = 1
    USAGE = 2
    INPUT_ERROR = 3
    IO_ERROR = 4
    INTERRUPTED = 130


class OneLineParser(argparse.ArgumentParser):
    """argparse, whose usage errors are the project's one ``FAIL: -: USAGE: ...`` line (exit 2), not a usage
    block: a value outside its range, an unknown choice or a missing option reads like every other refusal."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def parse_or_fail(parser: argparse.ArgumentParser, argv: Sequence[str] | None,
                  extra_refused: Callable[[argparse.Namespace, list[str]], UsageError | None] | None = None
                  ) -> argparse.Namespace | int:
    """The parsed arguments, or the exit code 2 once the usage error's one FAIL line is printed.

    Words argparse does not know are a usage error too; ``extra_refused`` may word it otherwise (the verifier's
    record commands never echo them: they may be her values)."""
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            raise (extra_refused(args, extra) if extra_refused else None) or UsageError(
                f"{parser.prog}: unrecognized arguments: {' '.join(extra)} (see {parser.prog} --help)")
    except UsageError as exc:
        say_failure(exc.diagnostic())
        return ExitCode.USAGE
    return args


def new_parser(prog: str, description: str, version: str) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction,
                                                                      argparse.ArgumentParser]:
    """The top parser of a command line, its subcommand group, and the options every subcommand shares."""
    common = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    # SUPPRESS: a subcommand must not reset a -v given before it
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="show a traceback on failure")
    parser = OneLineParser(prog=prog, allow_abbrev=False, description=description, epilog=EXIT_CODES,
                           parents=[common])
    parser.add_argument("--version", action="version", version=f"%(prog)s {version}")
    sub = parser.add_subparsers(required=True, dest="command", metavar="COMMAND")
    return parser, sub, common


class StoreOnce(argparse._StoreAction):
    """A single-value option given twice is refused: ``--weight-column w --weight-column x1`` must not keep the
    last one silently (it could publish another column than the one meant)."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_given_once", set())
        if self.dest in seen:
            parser.error(f"{option_string} is given twice; it takes one value")
        seen.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


def add_command(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, name: str, *,
                run: Callable[[argparse.Namespace], int], help: str, description: str, epilog: str | None = None,
                literal_stdout: bool = True, data_stdout: bool = False) -> argparse.ArgumentParser:
    """A subcommand whose handler is ``run``.

    ``literal_stdout`` writes every control character the command prints as an
    escape (names come from publishers); the TUI, which draws the terminal
    itself, turns it off. Text for people is fitted to the terminal's width
    (:func:`~verifier.frontend.output.output_width`); JSON (``--json``) and a
    command whose stdout is data (``data_stdout``) are never wrapped.
    """
    p = sub.add_parser(name, parents=[common], allow_abbrev=False, help=help, description=description, epilog=epilog)
    p.register("action", None, StoreOnce)
    p.register("action", "store", StoreOnce)
    p.set_defaults(func=run, literal_stdout=literal_stdout, data_stdout=data_stdout)
    return p


def _interrupted(exc: BaseException) -> bool:
    """Ctrl-C, even where it lands inside a compiled kernel (numba reports it as a SystemError around it)."""
    while exc is not None:
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _note(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning meant for people (a name taken after normalization) as one ``note:`` line on stderr; any other
    warning as Python shows it."""
    if issubclass(category, NameNormalized):
        print(f"note: {message}", file=sys.stderr)
    else:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _silence_stdout(stdout) -> None:
    """Point fd 1 at /dev/null, so that what is left in the buffer cannot fail again at exit."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
    except (OSError, ValueError):
        pass


def run_parsed(args: argparse.Namespace) -> int:
    """Run a parsed subcommand: ``FAIL:`` line and exit code on the project's own errors.

    Only the project's own errors, running out of memory, an interrupt and a
    failed write of the output are caught; a traceback is shown for them only
    with ``--verbose``.
    """
    args.verbose = getattr(args, "verbose", False)
    stdout = sys.stdout
    if getattr(args, "literal_stdout", True):
        width = None if getattr(args, "json", False) or getattr(args, "data_stdout", False) else output_width()
        sys.stdout = LiteralStream(FittedStream(stdout, width) if width else stdout)
    main_thread = threading.current_thread() is threading.main_thread()
    start_watching()
    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGINT)} if main_thread else {}
    unraisable = sys.unraisablehook
    sys.unraisablehook = lambda info: None if isinstance(info.exc_value, KeyboardInterrupt) else unraisable(info)
    try:
        with warnings.catch_warnings():
            if not args.verbose:  # numpy's RuntimeWarnings are no message for people: undefined figures are null
                warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("default", NameNormalized)
            warnings.showwarning = _note
            with fewer_collections():  # a census's millions of objects are not walked again and again
                code = int(args.func(args))
            raise_if_interrupted()  # a signal whose interrupt was swallowed on the way still ends the command
        sys.stdout.flush()  # a full disk or a closed pipe is this command's failure, not the interpreter's at exit
        return code
    except VerifierError as exc:
        if args.verbose:
            raise
        try:
            stdout.flush()
        except (OSError, ValueError):  # what is left for a full or closed output is dropped, not retried at exit
            _silence_stdout(stdout)
        say_failure(exc.diagnostic())
        return exc.exit_code
    except MemoryError:
        if args.verbose:
            raise
        say_failure("FAIL: -: OUT_OF_MEMORY: not enough memory for this table")
        return ExitCode.IO_ERROR
    except BrokenPipeError:  # the reader went away (`| head`): the command did not finish, so it did not pass
        _silence_stdout(stdout)
        say_failure("FAIL: -: OUTPUT_CLOSED: the output was closed before the command finished")
        return ExitCode.IO_ERROR
    except (KeyboardInterrupt, SystemError) as exc:
        if args.verbose or not _interrupted(exc):
            raise
        _silence_stdout(stdout)
        say_failure("FAIL: -: INTERRUPTED: stopped by Ctrl-C or SIGTERM before it finished; nothing was left "
                    "half-written")
        end_if_console(ExitCode.INTERRUPTED)  # before the interrupted work's frames are freed
        return ExitCode.INTERRUPTED
    except OSError as exc:
        if args.verbose or exc.errno is None:
            raise
        if not _is_stdout(exc, stdout):  # any other the OS raises (a name too long, a link loop, a read-only
            say_failure(_os_failure(exc))  # folder): one line naming the path, never a traceback
            return ExitCode.IO_ERROR
        _silence_stdout(stdout)
        say_failure(f"FAIL: -: WRITE_FAILED: cannot write the output ({os.strerror(exc.errno)})")
        return ExitCode.IO_ERROR
    finally:
        sys.stdout = stdout
        sys.unraisablehook = unraisable  # a swallowed interrupt is said once, as INTERRUPTED, not "Exception ignored"
        for sig, handler in previous.items():
            signal.signal(sig, handler)


#: what the OS said, as a reason code a script can test
_OS_REASONS = {errno.ENAMETOOLONG: "PATH_TOO_LONG", errno.ELOOP: "LINK_LOOP", errno.EROFS: "WRITE_FAILED",
               errno.EACCES: "PERMISSION_DENIED", errno.EPERM: "PERMISSION_DENIED", errno.ENOSPC: "WRITE_FAILED",
               errno.EDQUOT: "WRITE_FAILED", errno.ENOENT: "FILE_NOT_FOUND", errno.ENOTDIR: "NOT_A_DIRECTORY"}


def _os_failure(exc: OSError) -> str:
    """The one FAIL line of an error the OS raised on a file the command named or wrote."""
    where = exc.filename if isinstance(exc.filename, str) else "-"
    shown = where if len(where) <= 120 else where[:60] + "..." + where[-57:]  # a 4,000-character path, cut
    reason = _OS_REASONS.get(exc.errno, "IO_FAILURE")
    return f"FAIL: {literal(shown)}: {reason}: {os.strerror(exc.errno)}"


def _is_stdout(exc: OSError, stdout) -> bool:
    """Whether an error came from writing the command's own output (fd 1), not from a file it was writing."""
    try:
        stdout.flush()
    except OSError:
        return True
    except ValueError:
        return False
    return exc.filename is None and exc.errno in (errno.ENOSPC, errno.EIO, errno.EPIPE, errno.EDQUOT, errno.EFBIG)
