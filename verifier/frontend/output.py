"""Results for people (plain text tables) and for programs (JSON on stdout)."""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import textwrap
from typing import Any, Sequence

__all__ = ["ELLIPSIS", "MIN_WIDTH", "FittedStream", "command_lines", "cut", "error_width", "fit_line", "finite",
           "output_width", "print_json", "say_failure", "text_table"]

#: what a cut cell ends with
ELLIPSIS = "\u2026"
#: the narrowest output a command fits (a smaller COLUMNS is taken as this)
MIN_WIDTH = 40
#: the narrowest a column's cells are cut to
MIN_CELL = 8
#: the longest cell without a space that is never cut (numbers, codes, quoted names)
MAX_WORD = 24


def finite(x: float) -> float | None:
    """JSON has no NaN or infinity: an undefined figure is ``null``."""
    x = float(x)
    return x if math.isfinite(x) else None


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout; NaN is refused (use :func:`finite`)."""
    sys.stdout.write(json.dumps(data, indent=2, allow_nan=False) + "\n")


def _columns() -> int | None:
    """``COLUMNS`` as a width, None where it is unset or no number (COLUMNS=² is no width, not a crash)."""
    columns = os.environ.get("COLUMNS", "")
    return max(int(columns), MIN_WIDTH) if columns.isascii() and columns.isdigit() else None


def _is_terminal(stream) -> bool:
    try:
        return os.isatty(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return False


def _terminal_width() -> int:
    return max(shutil.get_terminal_size((80, 24)).columns, MIN_WIDTH)


def output_width() -> int | None:
    """The width the command's text output must fit: ``COLUMNS`` when set, else the terminal's when stdout is
    one; None when stdout is a pipe or a file (whole lines, for scripts and grep)."""
    columns = _columns()
    if columns is not None:
        return columns
    return _terminal_width() if _is_terminal(sys.__stdout__) else None


def error_width() -> int | None:
    """The width a FAIL line is wrapped at (issue 60, item 4): where standard error is a terminal, ``COLUMNS`` when
    set, else the terminal's; None where it is a pipe or a file, so that a script reads one line per failure."""
    if not _is_terminal(sys.__stderr__):
        return None
    columns = _columns()
    return columns if columns is not None else _terminal_width()


def fit_line(line: str, width: int | None) -> str:
    """``line`` wrapped at its spaces to ``width`` (None: whole), continuations indented two more spaces than the
    line; a single word longer than the width (a long path) is left whole, and a shell command's continuation
    (`` \\`` ending a line of :func:`command_lines`) stays with the word before it, never on a line of its own."""
    if width is None or len(line) <= width:
        return line
    lead = line[:len(line) - len(line.lstrip(" "))]
    body = line[len(lead):]
    glued = body[:-2] + "\x00\\" if body.endswith(" \\") else body  # textwrap never breaks at the NUL
    wrapped = textwrap.wrap(glued, width, initial_indent=lead, subsequent_indent=lead + "  ", break_long_words=False,
                            break_on_hyphens=False)
    return "\n".join(wrapped).replace("\x00", " ") or line


def say_failure(line: str) -> None:
    """A FAIL line on standard error, wrapped at the terminal's width where it is one (:func:`error_width`)."""
    print(fit_line(line, error_width()), file=sys.stderr)


def cut(cell: str, width: int) -> str:
    """``cell`` in at most ``width`` characters: cut with an ellipsis when longer."""
    return cell if len(cell) <= width else cell[:max(width - 1, 0)] + ELLIPSIS


def text_table(rows: list[list[str]], header: list[str], *, left: Sequence[int] = (0,),
               width: int | None = None) -> str:
    """A plain text table: columns in ``left`` aligned left, the others right.

    The table fits ``width`` (default :func:`output_width`; None: no limit).
    Too wide, it first cuts the longest cells of the other columns with an
    ellipsis, down to their header's width (the first column, which names
    the row, is kept whole, and so is a number); then it closes the gaps
    between columns to one space; still too wide, it goes below itself in
    blocks of columns, each led by the first column. Full values stay in
    ``--json`` and the reports.
    """
    width = output_width() if width is None else width
    left = {k % len(header) for k in left}
    widths = [max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(header)]
    gap = 2
    if width is not None and _span(widths) > width:
        widths = _narrowed(widths, header, rows, width)
        if _span(widths) > width:
            gap = 1
        if _span(widths, gap) > width:
            if any(_span([widths[0], w], 1) > width for w in widths[1:]):
                return _listed(header, rows)  # a column beside the first is already too wide: each row as a list
            blocks = _blocks(widths, width)
            return "\n\n".join(text_table([[r[0], *(r[k] for k in block)] for r in rows],
                                           [header[0], *(header[k] for k in block)],
                                           left=[0, *(i + 1 for i, k in enumerate(block) if k in left)], width=width)
                                for block in blocks)
    space = " " * gap
    line = space.join(cut(h, w).ljust(w) for h, w in zip(header, widths)).rstrip()
    body = [
        space.join(cut(c, w).ljust(w) if k in left else cut(c, w).rjust(w)
                   for k, (c, w) in enumerate(zip(r, widths))).rstrip()
        for r in rows
    ]
    return "\n".join([line, space.join("-" * w for w in widths), *body])


def _listed(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table too wide for any layout in columns (its first column alone, beside one other, passes the width): each
    row's first cell on a line of its own, then each other cell under it as ``header: value``."""
    return "\n".join(line for r in rows for line in
                     [r[0], *(f"  {h}: {c}" for h, c in zip(header[1:], r[1:]))])


def _span(widths: Sequence[int], gap: int = 2) -> int:
    return sum(widths) + gap * (len(widths) - 1)


def _narrowed(widths: list[int], header: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> list[int]:
    """Column widths cut one character at a time, widest first, until the table fits ``width`` or no column can
    give more. The first column keeps its width; no column goes below its header or its longest word (a cell
    without a space, up to :data:`MAX_WORD`): a number is never cut."""
    out = list(widths)
    floor = [w if k == 0 else min(w, max(len(h), MIN_CELL, *(len(r[k]) for r in rows
                                                               if " " not in r[k] and len(r[k]) <= MAX_WORD)))
             for k, (w, h) in enumerate(zip(widths, header))]
    while _span(out) > width:
        k = max(range(len(out)), key=lambda j: (out[j] > floor[j], out[j], j))
        if out[k] <= floor[k]:
            break
        out[k] -= 1
    return out


def _blocks(widths: Sequence[int], width: int) -> list[list[int]]:
    """The other columns in groups that fit ``width`` beside the first (at least one column a group)."""
    blocks: list[list[int]] = [[]]
    for k in range(1, len(widths)):
        if blocks[-1] and _span([widths[0], *(widths[j] for j in blocks[-1]), widths[k]]) > width:
            blocks.append([])
        blocks[-1].append(k)
    return blocks


class FittedStream:
    """A text stream that wraps each line longer than ``width`` at its spaces, continuations indented two more
    spaces than the line. Tables from :func:`text_table` already fit; a single word longer than the width
    (a long path) is left whole."""

    def __init__(self, stream, width: int):
        self._stream = stream
        self.width = width
        self._pending = ""

    def write(self, text: str) -> int:
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        for line in lines:
            self._stream.write(self._fit(line) + "\n")
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._stream.write(self._pending)
            self._pending = ""
        self._stream.flush()

    def _fit(self, line: str) -> str:
        return fit_line(line, self.width)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def command_lines(words: Sequence[str], width: int | None) -> str:
    """A shell command as the user would type it: ``$ `` and the words, quoted, continued with `` \\`` lines
    indented four spaces where the command is wider than ``width`` (one line when None)."""
    import shlex

    quoted = [shlex.quote(w) for w in words]
    if width is None:
        return "$ " + " ".join(quoted)
    units: list[str] = []  # an option and its value stay on one line, where the line can hold them
    for word in quoted:
        if (units and units[-1].startswith("--") and " " not in units[-1] and not word.startswith("-")
                and 4 + len(units[-1]) + 1 + len(word) + 2 <= width):
            units[-1] += " " + word
        else:
            units.append(word)
    lines, line = [], "$"
    for word in units:
        if len(line) + 1 + len(word) + 2 > width and line.strip() not in ("$", ""):
            lines.append(line + " \\")
            line = "   "
        line += " " + word
    return "\n".join([*lines, line])
