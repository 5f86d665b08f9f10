"""``verifier tui``: the subject's terminal interface (SPEC section 10.1); Textual is imported only when it runs."""

from __future__ import annotations

import argparse
import sys

from verifier.frontend import UsageError, add_command, check_positive, check_probability, count
from verifier.releases.links import MOST_EARLIER
from verifier.releases.policy import load_policy
from verifier.releases.record import refuse_record_on_command_line

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "tui", run=run, literal_stdout=False, help="check your own record in a terminal interface",
        description="Open a release with the publisher's public key, see the verification result, enter your "
        "record in a form generated from the signed schema (or load a record file), and see your permutation "
        "distance, matching records, spreads against the claimed (D, v) and your own thresholds, attribute "
        "disclosure and the random-match test. Keyboard only; F1 shows help. Your record is never given on the "
        "command line and never written unless you export your report.",
        epilog="Exit codes: 0 done, 1 the last release opened did not verify, 2 usage error, 4 the TUI stopped on "
        "an unexpected error (one line on stderr; with --verbose also the traceback, without local variables); 3 "
        "the --policy file is not a verdict policy.",
    )
    p.add_argument("release", nargs="?", metavar="DIR", help="the release directory (or type it in the TUI)")
    p.add_argument("--key", metavar="public.pem", help="the publisher's public key, obtained out of band")
    p.add_argument("--fingerprint", metavar="SHA256", help="also require the key's fingerprint to be this")
    p.add_argument("--record", metavar="my_record.json", help="load your record from this file once verified")
    p.add_argument("--alpha", type=float, default=0.01, help="p-value below which a match is confident")
    p.add_argument("--samples", type=count("samples"), default=10_000, metavar="N", help="Monte Carlo draws (default 10000, at most 10000000)")
    p.add_argument("--policy", metavar="policy.json", help="decide your level by this verdict policy instead of "
                   "the verifier's default (docs/subject.md, 'The verdict policy')")
    p.add_argument("--with", dest="others", action="append", default=[], metavar="DIR",
                   help="another release of the same people, verified with the same --key (repeatable, at most 16): "
                   "your results also say what the releases tell about you together, as `verifier joint` does")
    p.add_argument("--proof", metavar="FILE", help="the release's log proof (or type it in the TUI)")
    p.add_argument("--log-policy", metavar="FILE", help="your log policy: the log's key, the witnesses' keys and "
                   "how many must cosign; needed with --proof")


def run(args: argparse.Namespace) -> int:
    """The subject's TUI (SPEC section 10.1)."""
    check_probability("--alpha", args.alpha)
    check_positive("--samples", args.samples)
    if args.record is not None:
        refuse_record_on_command_line(args.record)
    policy = load_policy(args.policy)
    if len(args.others) > MOST_EARLIER:
        raise UsageError(f"--with is given {len(args.others)} times; your record is checked with at most "
                         f"{MOST_EARLIER} other releases")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("the TUI needs a terminal; `verifier check` gives the same report without one",
                         reason="NO_TERMINAL")
    from verifier.tui import SubjectApp  # Textual loads only for the TUI

    app = SubjectApp(args.release, args.key, fingerprint=args.fingerprint, record_path=args.record,
                     alpha=args.alpha, samples=args.samples, verbose=args.verbose, policy=policy, proof=args.proof,
                     log_policy=args.log_policy, others=args.others)
    app.run()
    return int(app.return_code or 0)
