"""F2, the release tab: open a release with a trusted key; the verification result first, and nothing else on failure."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Input, Static

from verifier.text import literal

__all__ = ["ReleaseTab"]


class ReleaseTab(VerticalScroll):
    """The folder, the key, an optional fingerprint pin, log proof and log policy; posts :class:`ReleaseTab.Open`
    on Verify."""

    class Open(Message):
        """She asks to open (or re-open) the release named in the fields."""

    def __init__(self, directory: str, key: str, fingerprint: str, proof: str = "", log_policy: str = "",
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self._start = (directory, key, fingerprint, proof, log_policy)

    def compose(self) -> ComposeResult:
        directory, key, fingerprint, proof, log_policy = self._start
        yield Static("Open a release with the publisher's public key, obtained from the publisher "
                     "(never from inside the release).", id="verification", markup=False)
        with Horizontal(classes="row"):
            yield Static("Release folder", classes="name", markup=False)
            yield Input(directory, id="release-dir", compact=True)
        with Horizontal(classes="row"):
            yield Static("Trusted public key", classes="name", markup=False)
            yield Input(key, id="key-path", compact=True)
        with Horizontal(classes="row"):
            yield Static("Pin fingerprint", classes="name", markup=False)
            yield Input(fingerprint, id="fingerprint", compact=True, placeholder="optional SHA-256")
        with Horizontal(classes="row"):
            yield Static("Log proof", classes="name", markup=False)
            yield Input(proof, id="proof-path", compact=True, placeholder="optional: RELEASE.tlog-proof")
        with Horizontal(classes="row"):
            yield Static("Log policy", classes="name", markup=False)
            yield Input(log_policy, id="log-policy-path", compact=True, placeholder="with a proof: your log policy")
        with Horizontal(classes="buttons"):
            yield Button("Verify", id="verify", compact=True)

    @on(Button.Pressed, "#verify")
    @on(Input.Submitted, "#release-dir, #key-path, #fingerprint, #proof-path, #log-policy-path")
    def _verify_pressed(self) -> None:
        self.post_message(self.Open())

    def values(self) -> tuple[str, str, str | None, str | None, str | None]:
        """The folder, the key file, the fingerprint pin, the log proof and the log policy (``None`` when empty) as
        typed."""
        directory = self.query_one("#release-dir", Input).value.strip()
        key = self.query_one("#key-path", Input).value.strip()
        rest = [self.query_one(f"#{name}", Input).value.strip() or None
                for name in ("fingerprint", "proof-path", "log-policy-path")]
        return directory, key, rest[0], rest[1], rest[2]

    def focus_first_empty(self) -> None:
        directory = self.query_one("#release-dir", Input).value
        self.query_one("#release-dir" if not directory else "#key-path", Input).focus()

    def show_verifying(self) -> None:
        self.query_one("#verification", Static).update("Verifying ...")

    def show_failure(self, line: str) -> None:
        text = Text()
        text.append("NOT VERIFIED\n", style="bold reverse")
        text.append(literal(line))
        text.append("\n\nNothing from this release is shown. Check the folder and the key, then Verify again.")
        self.query_one("#verification", Static).update(text)

    def show_verified(self, facts: list[tuple[str, str]]) -> None:
        pad = max(len(k) for k, _ in facts)
        text = Text()
        text.append("VERIFIED", style="bold reverse")
        text.append(" with the key you trust: the manifest and the data are exactly what its holder signed.\n")
        for k, v in facts:
            text.append(f"{k:<{pad}}  {literal(v)}\n")
        text.append("\nNext: F3 to enter your record.")
        self.query_one("#verification", Static).update(text)
