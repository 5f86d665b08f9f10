"""Figures and untrusted text for people: one formatting for the CLI, the TUI and the reports."""

from __future__ import annotations

import math
import re
import unicodedata
import warnings

__all__ = ["figure", "has_layout", "html_table", "literal", "markdown", "markdown_code", "note_normalized", "number", "plural",
           "same_name",
           "LiteralStream", "NameNormalized"]

# C0/C1 controls, line/paragraph separators and the bidirectional overrides
# that can reorder what a terminal shows (Trojan Source, CVE-2021-42574)
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: characters that show nothing where they stand (zero-width spaces and joiners, the soft hyphen, the byte order mark,
#: word joiners, fillers, variation selectors): read as text they make two names look alike, so every front end
#: writes them as escapes too (issue 59, item 9). They are not layout: a name may hold them
INVISIBLE = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200d\u2060-\u2065\u3164"
             "\ufe00-\ufe0f\ufeff\uffa0")
_SHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069" + INVISIBLE + "]")


def number(x: float | int | None, *, share: bool = False) -> str:
    """The one number format for people: an integer as an integer, a share as a percentage, anything else to 4
    significant digits, trailing zeros dropped (never fewer digits before the point: 87847.29 is ``87847``;
    scientific only beyond 1e15 or below 1e-4); ``None`` and non-finite values read ``undefined``.

    >>> number(12), number(2.0), number(0.1231, share=True), number(87847.2934), number(0.45), number(1e-7)
    ('12', '2', '12.31%', '87847', '0.45', '1e-07')
    """
    if x is None or isinstance(x, bool):
        return "undefined" if x is None else str(x).lower()
    if isinstance(x, int) and not share:
        return str(x)
    x = float(x)
    if not math.isfinite(x):
        return "undefined"
    if share:
        return number(100.0 * x) + "%"
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    if not 1e-4 <= abs(x) < 1e15:
        mantissa, exponent = f"{x:.3e}".split("e")
        return f"{_trimmed(mantissa)}e{exponent}"
    return _trimmed(f"{x:.{max(0, 3 - math.floor(math.log10(abs(x))))}f}")


def _trimmed(text: str) -> str:
    """``1.500`` as ``1.5``, ``2.000`` as ``2``: the zeros after the last significant digit say nothing."""
    return text.rstrip("0").rstrip(".") if "." in text else text


#: the name the command lines, the TUI and the reports format their figures by: :func:`number` itself
figure = number


def html_table(rows, title: str) -> str:
    """``(label, value)`` rows as a small HTML table with a caption, every string escaped (a notebook's
    ``_repr_html_``)."""
    import html

    body = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in rows)
    return f"<table><caption>{html.escape(title)}</caption>{body}</table>"


def markdown(text: object) -> str:
    """Untrusted text in a Markdown report (a table cell, a list item): one line, every control or
    direction-changing character escaped as :func:`literal` does, and no markup (``|``, `````, ``*``, ``_``,
    brackets, ``<``, ``>``, ``#`` escaped). The one escaping of the Markdown reports."""
    s = literal(" ".join(str(text).split()))
    for ch in "\\|`*_[]<>#":
        s = s.replace(ch, "\\" + ch)
    return s


def markdown_code(text: object) -> str:
    """Untrusted text as a Markdown code span: one line, controls and direction changes escaped as
    :func:`literal` does, a backtick (which would end the span) written ``'``; no other escaping, since a code
    span shows backslashes as they are."""
    return "`" + literal(" ".join(str(text).split())).replace("`", "'") + "`"


def same_name(name: str) -> str:
    """A column or field name as it is compared: Unicode NFC, so that ``café`` typed as ``cafe`` plus a combining
    accent is the same name (a spreadsheet and a shell may write either)."""
    return unicodedata.normalize("NFC", name)


class NameNormalized(UserWarning):
    """A name that matched only once both spellings were put in NFC: the command goes on, and says so."""


def note_normalized(given: str, name: str, where: str) -> None:
    """Say (as a :class:`NameNormalized` warning; the CLI prints it as a ``note:`` line) that ``given`` in
    ``where`` was taken for ``name`` only after Unicode normalization, when the two spellings differ."""
    if given != name:
        warnings.warn(f"{where}: {ascii(given)} was taken for the attribute {ascii(name)}: one name in Unicode "
                      "NFC, spelled with other code points", NameNormalized, stacklevel=3)


def plural(n: int, noun: str, *, number: bool = True, plural_form: str | None = None) -> str:
    """``1 released record``, ``3 released records``, ``1 class``, ``2 classes`` (``plural_form`` where an s is
    not enough; ``number=False``: the noun alone, in the right number)."""
    word = noun if int(n) == 1 else (plural_form or noun + "s")
    return f"{int(n)} {word}" if number else word


def literal(text: object) -> str:
    r"""``text`` with every control, direction-changing or invisible character written as an escape.

    Column names, categories and manifest strings come from the publisher; a
    terminal must show them as they are, never act on them.

    >>> literal("\x1b[2J\rOK")
    '\\x1b[2J\\x0dOK'
    """
    return _SHOWN.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                      str(text))


def has_layout(text: str) -> bool:
    """Whether ``text`` holds a control or direction-changing character: text that would act on a terminal or a
    page (a new line, a carriage return, an escape sequence, a bidirectional override) rather than be read."""
    return _UNSAFE.search(text) is not None


class LiteralStream:
    """A text stream that writes every control, direction-changing or invisible character as an escape, but newlines
    and tabs.

    The command lines print tables and sentences built from publisher-supplied
    names; wrapped around stdout, this keeps any of them from moving the
    cursor, clearing the screen or reordering a line. JSON output is
    unchanged (``json.dumps`` already escapes such characters).
    """

    _KEEP = {"\n": "\n", "\t": "\t"}

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        safe = _SHOWN.sub(lambda m: self._KEEP.get(m.group()) or literal(m.group()), text)
        self._stream.write(safe)
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
