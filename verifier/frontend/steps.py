"""Demos that run the real commands, each in its own process, as a user would type them."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Sequence

from verifier.frontend.output import command_lines, output_width

__all__ = ["run_steps"]


def run_steps(steps: Sequence[tuple[str, str, Sequence[str]]]) -> int:
    """Run ``(title, tool, argv)`` steps with ``python -m tool``; stop at the first that fails.

    Each step's title and command line are printed, then what the command
    printed (stdout to stdout, stderr to stderr). Returns the first non-zero
    exit code, else 0.
    """
    width = output_width()
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # each step fits what the demo fits, and only
    if width:  # that (a library's putenv can hand children a COLUMNS that os.environ does not show)
        env["COLUMNS"] = str(width)
    for title, tool, argv in steps:
        print(f"\n=== {title}\n{command_lines([tool, *argv], width)}\n", flush=True)
        proc = subprocess.run([sys.executable, "-m", tool, *argv], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, env=env)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        if proc.returncode != 0:
            return proc.returncode
    return 0
