"""``publisher demo``: the whole workflow on the paper's running example, each step a real command."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from verifier.frontend.output_paths import release_holding
from verifier.data.paper import example_folder
from verifier.errors import InputIOError
from verifier.frontend import add_command, command_lines, output_width, run_steps

__all__ = ["register"]

#: the demo's release seed, fixed so that its figures are the same every time (a real release draws a secret one)
DEMO_SEED = 2026

#: the subject who contributed record 3 of paper 003's Table 1 keeps her own record
SUBJECT_RECORD = '{"x1": 100.87, "x2": 902.21, "x3": 5108.54}\n'


def register(sub, common) -> None:
    p = add_command(
        sub, common, "demo", run=run, help="the whole workflow on the paper's running example",
        description="Make a key, publish a signed release of paper 003's running example, verify it, audit it "
        "against the original, replay its methods, and check one subject's record against it, with the real "
        "commands.",
    )
    p.add_argument("--out", metavar="DIR", help="an empty or new folder for the demo's files (default: a new temporary one)")


def _steps(original: str, out: Path) -> list[tuple[str, str, list[str]]]:
    keys, release, record = out / "keys", out / "release", out / "my_record.json"
    public = str(keys / "public.pem")
    return [
        ("The protector makes a signing key (keep private.pem secret; publish the fingerprint)", "publisher",
         ["keygen", "--out", str(keys), "--unencrypted"]),
        ("She anonymizes (additive noise, then reverse mapping), assesses, signs and publishes. The demo fixes "
         f"the seed ({DEMO_SEED}) so that its figures are the same every time; a real release leaves --seed out, and its "
         "seed is drawn at random and kept secret", "publisher",
         ["release", "--input", original, "--method", "additive_noise", "--param", "relative_sd=0.8",
          "--then", "reverse_mapping", "--seed", str(DEMO_SEED), "--key", str(keys / "private.pem"),
          "--public-key", public, "--dataset-id", "paper-example", "--out", str(release)]),
        ("Anyone verifies the release with the published key", "verifier", ["verify", str(release), "--key", public]),
        ("An auditor entitled to the original recomputes every claim", "verifier",
         ["audit", str(release), "--key", public, "--original", original, "--report", str(out / "audit.md")]),
        ("The auditor reruns the published methods with fresh seeds: is the release one of their runs?",
         "publisher", ["replay", str(release), "--key", public, "--original", original, "--runs", "30"]),
        ("The subject checks her own record against the verified release: distance, spreads, random-match test",
         "verifier", ["check", str(release), "--key", public, "--record", str(record)]),
    ]


def run(args: argparse.Namespace) -> int:
    """The whole workflow on the paper's running example, with the real commands."""
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="permuted-privacy-demo-"))
    if release_holding(out / "keys") is not None:
        raise InputIOError("lies inside a release; the demo writes keys and a release of its own elsewhere",
                           path=str(out), reason="OUTPUT_INSIDE_RELEASE")
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise InputIOError("is not empty; the demo writes into an empty or new folder", path=str(out),
                           reason="OUTPUT_EXISTS")
    (out / "my_record.json").write_text(SUBJECT_RECORD, encoding="utf-8")
    with example_folder() as folder:
        code = run_steps(_steps(str(folder / "original.csv"), out))
    if code != 0:
        return code
    print(f"\nEverything is in {out}: keys/, release/, audit.md with its plots, my_record.json.")
    script = Path(sys.executable).parent / "verifier"
    tui = [str(script) if script.exists() else "verifier", "tui", str(out / "release"), "--key",
           str(out / "keys" / "public.pem"), "--record", str(out / "my_record.json")]
    print("\nThe subject's own view, in a terminal (F1 for help, Ctrl+Q to quit):\n"
          + command_lines(tui, output_width()))
    return 0
