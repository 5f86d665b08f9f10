"""Results for people (plain text tables) and for programs (JSON on stdout)."""

from __future__ import annotations

import json
import math
import sys
from typing import Any, Sequence

__all__ = ["finite", "print_json", "text_table"]


def finite(x: float) -> float | None:
    """JSON has no NaN or infinity: an undefined figure is ``null``."""
    x = float(x)
    return x if math.isfinite(x) else None


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout; NaN is refused (use :func:`finite`)."""
    sys.stdout.write(json.dumps(data, indent=2, allow_nan=False) + "\n")


def text_table(rows: list[list[str]], header: list[str], *, left: Sequence[int] = (0,)) -> str:
    """A plain text table: columns in ``left`` aligned left, the others right."""
    left = {k % len(header) for k in left}
    widths = [max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()
    body = [
        "  ".join(c.ljust(w) if k in left else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths))).rstrip()
        for r in rows
    ]
    return "\n".join([line, "  ".join("-" * w for w in widths), *body])
