"""``verifier witness``: cosign a log's checkpoints once they extend the last one cosigned (issue 39, item 3)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from verifier.frontend import ExitCode, UsageError, add_command, print_json

__all__ = ["register"]

_EPILOG = ("Exit codes: 0 cosigned, 1 refused (FAIL line with the reason: LOG_SIGNATURE, LOG_ROLLBACK, "
           "LOG_EQUIVOCATION, LOG_INCONSISTENT), 2 usage error, 3 a bad policy or key line, 4 a key or file "
           "unusable.")


def _witness_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", required=True, metavar="NAME",
                   help="the witness's name, a schema-less URL (council.example/witness); subjects name it in their "
                   "policy with its verifier key")
    p.add_argument("--key", required=True, metavar="witness.pem",
                   help="the witness's Ed25519 private key (publisher keygen, or openssl genpkey -algorithm ed25519)")
    p.add_argument("--passphrase-file", metavar="FILE", help="read the key's passphrase from this file")


def _state_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state", required=True, metavar="DIR",
                   help="where the witness keeps the last checkpoint it cosigned of each log (made if missing)")
    p.add_argument("--log-key", required=True, action="append", metavar="log.vkey",
                   help="the verifier key of a log to witness (one line, as publisher log init prints it); "
                   "serve takes it once per log")


def register(sub, common) -> None:
    p = sub.add_parser("witness", help="cosign a release log's checkpoints (C2SP tlog-witness)",
                       description="A witness cosigns a log's checkpoint only after checking that the log grew from "
                       "the last checkpoint it cosigned, so that a log cannot show two histories to two people. Run "
                       "one independent of the publisher (docs/release-format.md, section 7).")
    commands = p.add_subparsers(dest="witness_command", metavar="COMMAND", required=True)
    key = add_command(commands, common, "key", run=run_key, help="print the witness's verifier key",
                      description="Print the verifier key subjects put in their policy: NAME+KEYID+BASE64, key "
                      "type 0x04 (c2sp.org/tlog-cosignature).", epilog=_EPILOG)
    _witness_args(key)
    key.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    cosign = add_command(commands, common, "cosign", run=run_cosign, help="cosign a log's checkpoint from its files",
                         description="Read the log's checkpoint and tiles from LOG, check the checkpoint's signature "
                         "and that its tree extends the last one this witness cosigned (a consistency proof computed "
                         "from the tiles), then add the cosignature to LOG/checkpoint and print it.", epilog=_EPILOG)
    cosign.add_argument("log", metavar="LOG", help="the log's folder")
    _witness_args(cosign)
    _state_args(cosign)
    cosign.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    serve = add_command(commands, common, "serve", run=run_serve, help="answer add-checkpoint requests over HTTP",
                        description="Serve C2SP tlog-witness's POST /add-checkpoint for the logs of --log-key: "
                        "each request's checkpoint is cosigned once its consistency proof from the last one this "
                        "witness cosigned verifies; a fork is refused with 409 or 422. Stop with Ctrl-C.",
                        epilog="Exit codes: 0 stopped, 2 usage error, 3 a bad key line, 4 the key is unusable or "
                        "the address is taken.")
    _witness_args(serve)
    _state_args(serve)
    serve.add_argument("--listen", default="127.0.0.1:0", metavar="HOST:PORT",
                       help="where to listen (default 127.0.0.1:0, a free port; the address is printed)")
    serve.add_argument("--max-connections", type=_positive(int), default=512, metavar="N",
                       help="connections held at once (default 512, and never more than the file limit less 32; one "
                       "address holds at most half): a new one past it closes the longest-idle connection")
    serve.add_argument("--idle-timeout", type=_positive(float), default=10.0, metavar="SECONDS",
                       help="close a connection idle this long (default 10)")
    serve.add_argument("--request-timeout", type=_positive(float), default=10.0, metavar="SECONDS",
                       help="cut off a connection that has not sent its whole request within this long, however "
                       "it trickles (default 10)")


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not value > 0 or value > 86_400:
            raise argparse.ArgumentTypeError(f"a positive number up to 86400, not {json.dumps(text)}")
        return value
    return parse


def _cosigner(args: argparse.Namespace):
    from verifier.frontend.passphrase import load_key
    from verifier.transparency.witness import Cosigner

    if not args.name or any(c.isspace() or c == "+" for c in args.name):
        raise UsageError("--name holds no space and no '+' (a schema-less URL such as council.example/witness)")
    key = load_key(args.key, args.passphrase_file, asked="witness key passphrase: ")
    return Cosigner(args.name, key.public_raw, key.sign)


def _log_keys(paths: list[str]) -> dict[str, bytes]:
    from verifier.transparency.note import ED25519_TYPE
    from verifier.transparency.proof import read_vkey

    logs = {}
    for path in paths:
        origin, kind, public = read_vkey(path)
        if kind != ED25519_TYPE:
            raise UsageError(f"{path} is a witness's key (type 0x04); --log-key takes a log's")
        logs[origin] = public
    return logs


def run_key(args: argparse.Namespace) -> int:
    from verifier.transparency.note import COSIGNATURE_TYPE, vkey

    cosigner = _cosigner(args)
    shown = vkey(cosigner.name, COSIGNATURE_TYPE, cosigner.public_raw)
    if args.json:
        print_json({"name": cosigner.name, "verifier_key": shown})
    else:
        print(shown)
    return ExitCode.OK


def run_cosign(args: argparse.Namespace) -> int:
    from verifier.transparency.witness import cosign_log

    if len(args.log_key) != 1:
        raise UsageError("cosign takes the key of the one log it reads: give --log-key once")
    cosigner = _cosigner(args)
    result = cosign_log(Path(args.log), Path(args.state), cosigner, _log_keys(args.log_key))
    if args.json:
        print_json({"log": args.log, "origin": result.checkpoint.origin, "size": result.checkpoint.size,
                    "cosigned_from": result.known_size, "cosignature": result.line.rstrip("\n"),
                    "added": result.added})
    else:
        print(f"cosigned {result.checkpoint.origin} at size {result.checkpoint.size}: it extends the tree of size "
              f"{result.known_size} this witness cosigned before")
        print(result.line, end="")
        print(f"  added to {Path(args.log) / 'checkpoint'}" if result.added else
              "  not added: the log's checkpoint changed meanwhile; run again")
    return ExitCode.OK


def run_serve(args: argparse.Namespace) -> int:
    from verifier.transparency.witness_server import Limits, serve

    host, _, port = args.listen.rpartition(":")
    if not host or not (port.isascii() and port.isdigit()) or int(port) > 65535:
        raise UsageError(f"--listen takes HOST:PORT, not {json.dumps(args.listen)}")
    cosigner = _cosigner(args)
    serve(host, int(port), Path(args.state), cosigner, _log_keys(args.log_key),
          limits=Limits(args.max_connections, args.idle_timeout, args.request_timeout),
          ready=lambda url: (print(f"witness {cosigner.name} serving on {url}/add-checkpoint", flush=True),
                             sys.stdout.flush()))
    return ExitCode.OK
