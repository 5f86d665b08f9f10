"""Her verdict drawn in the terminal (issue 53, item 4): her level as a badge, her guess probability beside the base
rate for each sensitive attribute, her group's composition, and the random-match distribution with her distance
marked. The page draws the same in inline SVG (``verifier/page/pictures.js``); each picture says in words what its
colours show, so that a terminal without colour loses nothing."""

from __future__ import annotations

from typing import Any, Mapping

from rich.text import Text
from textual.widgets import Static

from verifier.releases.plain_words import chance
from verifier.text import literal

__all__ = ["BADGE_STYLES", "VerdictPicture", "picture_text"]

#: each level's badge: dark text on a light colour, as the page's
BADGE_STYLES = {"protected": "bold #0b3d0b on #d9f2d9", "at_risk": "bold #4d3800 on #fff0c2",
                "exposed": "bold #5c0000 on #ffd6d6", "not_verifiable": "bold #5c0000 on #ffd6d6"}
#: the width of a bar, in cells
BAR = 30
#: the most squares of a group drawn one by one
SQUARES = 40


def _bar(p: float | None) -> str:
    filled = round(max(0.0, min(1.0, float(p or 0.0))) * BAR)
    return "█" * filled + "░" * (BAR - filled)


def _guess(text: Text, name: str, entry: Mapping[str, Any]) -> None:
    text.append(f"\nYour {literal(name)}, guessed right:\n")
    text.append("  from this release ")
    text.append(_bar(entry.get("risk")), style="#1f5fa8")
    text.append(f" {chance(entry.get('risk'))}\n")
    text.append("  without it        ")
    text.append(_bar(entry.get("prior")), style="#7f7f7f")
    text.append(f" {chance(entry.get('prior'))}\n")


def _group(text: Text, n: int, same: int, name: str) -> None:
    if n <= SQUARES:
        text.append("  ")
        text.append("■" * same, style="#a8321f")
        text.append("□" * (n - same))
    else:
        text.append("  " + _bar(same / n))
    text.append(f"\n  {same} of the {n} records in your group share your {literal(name)} (filled).\n")


def _matches(text: Text, distribution: Mapping[str, float], distance: int) -> None:
    """Four rows of block characters, one column group per distance, hers in red and named under it."""
    shares = {int(d): float(p) for d, p in distribution.items()}
    last = min(max([distance, *shares]), 60)
    top = max(shares.values(), default=0.0) or 1.0
    wide = max(1, min(4, 60 // (last + 1)))
    levels = " ▁▂▃▄▅▆▇█"
    text.append("\nRandom records by distance (yours marked; taller: more random records):\n")
    for row in range(3, -1, -1):
        text.append("  ")
        for d in range(last + 1):
            eighths = max(0, min(8, round(32 * shares.get(d, 0.0) / top) - 8 * row))
            text.append(levels[eighths] * wide, style="bold #a8321f" if d == distance else "#1f5fa8")
        text.append("\n")
    text.append("  " + " " * (min(distance, last) * wide) + f"^ you: {distance} (distance 0 to {last})\n")


def picture_text(out: Mapping[str, Any]) -> Text:
    """The pictures of her check (``verifier check --json``'s object) as one block of styled text."""
    level = out["verdict"]["level"]
    text = Text()
    text.append(f" {level.replace('_', ' ').upper()} ", style=BADGE_STYLES[level])
    text.append("\n")
    for name, entry in (out.get("attribute_disclosure") or {}).items():
        _guess(text, name, entry)
        n = entry.get("worst_class_rows") or out.get("class_size") if out.get("model") == "generalized" else None
        if n and entry.get("mode") == "group":
            _group(text, int(n), int(round(float(entry["risk"]) * int(n))), name)
    if out.get("random_distribution") and out.get("distance") is not None:
        _matches(text, out["random_distribution"], int(out["distance"]))
    return text


class VerdictPicture(Static):
    """The pictures of her verdict, above its words."""

    def show(self, out: Mapping[str, Any] | None) -> None:
        self.update(Text() if out is None else picture_text(out))
