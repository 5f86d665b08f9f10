"""Ctrl+E: her report written where she says, only when she asks (JSON or Markdown, mode 0600, never overwriting)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from verifier.data.tables import write_atomic
from verifier.frontend.output_paths import check_output
from verifier.errors import VerifierError
from verifier.text import literal, markdown

__all__ = ["ExportScreen", "report_text", "write_report"]


class ExportScreen(ModalScreen["tuple[str, str] | None"]):
    """Ctrl+E: where and in which format to write her report."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    ExportScreen { align: center middle; }
    ExportScreen > Vertical { width: 70; height: auto; border: round $accent; background: $surface; padding: 0 1; }
    ExportScreen Horizontal { height: auto; }
    ExportScreen Button { margin-right: 1; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Export your report. It holds figures about your record, not the record; the file is "
                         "readable by you only. An existing file is never overwritten.", markup=False)
            yield Input("my_report.json", id="export-path", compact=True)
            with Horizontal():
                yield Button("JSON", id="export-json", compact=True)
                yield Button("Markdown", id="export-md", compact=True)
                yield Button("Cancel", id="export-cancel", compact=True)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "export-cancel":
            self.dismiss(None)
            return
        fmt = "json" if event.button.id == "export-json" else "md"
        path = self.query_one("#export-path", Input).value.strip()
        if fmt == "md" and path.endswith(".json"):
            path = path[: -len(".json")] + ".md"
        self.dismiss((fmt, path))

    @on(Input.Submitted, "#export-path")
    def _entered(self, event: Input.Submitted) -> None:
        """Enter in the file name writes it: Markdown for a name ending in .md, else JSON (issue 60, item 8)."""
        path = event.value.strip()
        self.dismiss(("md" if path.endswith(".md") else "json", path))

    def action_cancel(self) -> None:
        self.dismiss(None)


def write_report(path: str, text: str) -> tuple[bool, str]:
    """Write her report ``text`` to ``path``: whether it was written, and the sentence to show her.

    An existing file is never overwritten; the file is readable by her only
    and appears whole or not at all.
    """
    if not path:
        return False, "Give a file name."
    target = Path(path).expanduser()
    try:
        if target.exists() and not target.is_symlink() and target.is_file():
            return False, f"{literal(path)} exists; it was not overwritten. Choose another name."
        check_output(target, option="the report")  # no link, device, folder, or place inside a release
        write_atomic(target, lambda handle: handle.write(text), mode=0o600)
    except VerifierError as exc:
        return False, literal(exc.diagnostic())
    except OSError as exc:  # a name too long, a loop of links, a read-only folder: said, and her session goes on
        return False, f"{literal(path)} cannot be written ({exc.strerror}). Choose another name."
    return True, f"Your report is in {literal(path)}."


def report_json(check: Any, random: Any, policy: Any, standing: Any, joint: Any = None) -> dict[str, Any]:
    """Her report as ``verifier check --json`` prints it; with other releases, ``joint`` as ``verifier joint
    --json`` prints it."""
    return {**check.to_json(random, policy, unwitnessed=standing.unwitnessed), "log": standing.to_json(),
            **({"joint": joint.to_json()} if joint is not None else {})}


def report_text(check: Any, random: Any, policy: Any, fmt: str, standing: Any, joint: Any = None) -> str:
    """Her report in ``fmt``: ``json`` (:func:`report_json`) or Markdown."""
    if fmt == "json":
        return json.dumps(report_json(check, random, policy, standing, joint), indent=2, allow_nan=False) + "\n"
    text = check.to_markdown(random, policy, unwitnessed=standing.unwitnessed)
    if joint is None:
        return text
    lines = joint.verdict().lines
    return text.rstrip("\n") + "\n\n## Together with the other releases of you\n\n" + "\n".join(
        f"- {markdown(line)}" for line in lines) + "\n"
