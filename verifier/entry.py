"""``verifier``, the console command (:func:`verifier.console.run_console` around :func:`verifier.cli.main`)."""

from __future__ import annotations

from importlib import import_module

from verifier.console import run_console

__all__ = ["script"]


def script() -> None:
    run_console(lambda: import_module("verifier.cli").main)
