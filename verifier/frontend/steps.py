"""Demos that run the real commands, each in its own process, as a user would type them."""

from __future__ import annotations

import subprocess
import sys
from typing import Sequence

__all__ = ["run_steps"]


def run_steps(steps: Sequence[tuple[str, str, Sequence[str]]]) -> int:
    """Run ``(title, tool, argv)`` steps with ``python -m tool``; stop at the first that fails.

    Each step's title and command line are printed, then what the command
    printed (stdout to stdout, stderr to stderr). Returns the first non-zero
    exit code, else 0.
    """
    for title, tool, argv in steps:
        print(f"\n=== {title}\n$ {tool} {' '.join(argv)}\n", flush=True)
        proc = subprocess.run([sys.executable, "-m", tool, *argv], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        if proc.returncode != 0:
            return proc.returncode
    return 0
