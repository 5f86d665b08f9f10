"""The witness under load on 127.0.0.1 (issue 52, item 3): honest clients beside slow ones.

    python -m benchmarks.witness_load                 # 200 clients for 30 s, 100 of them slow
    python -m benchmarks.witness_load --seconds 8     # shorter

A real ``verifier witness serve`` runs in its own process on 127.0.0.1 with a real log's key. Honest clients send
add-checkpoint requests over keep-alive connections, one every half second (``--pause``), each answered with a
cosignature; slow
clients open a connection, send the start of a request and then one byte a second, never finishing (slowloris).
Every loop is bounded in count and time and talks to 127.0.0.1 only. The report: the honest requests answered,
their slowest answer, how many slow clients the witness cut off, and after how long.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["load"]


def _log(root: Path) -> tuple[bytes, Path]:
    """A log of 3 entries signed with a new key, its checkpoint note and the log's verifier key file."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives import serialization

    from verifier.transparency.merkle import Tree, leaf_hash
    from verifier.transparency.note import ED25519_TYPE, checkpoint_text, signature_line, vkey

    key = Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    tree = Tree([leaf_hash(f"entry {i}\n".encode()) for i in range(3)])
    text = checkpoint_text("load.example/log", 3, tree.root())
    note = (text + "\n" + signature_line("load.example/log", ED25519_TYPE, raw, key.sign(text.encode()))).encode()
    (root / "log.vkey").write_text(vkey("load.example/log", ED25519_TYPE, raw) + "\n")
    witness = Ed25519PrivateKey.generate()
    (root / "w.pem").write_bytes(witness.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))
    (root / "w.pem").chmod(0o600)
    return note, root / "log.vkey"


def _honest(host: str, port: int, note: bytes, until: float, out: list, lock: threading.Lock,
            pause: float) -> None:
    from verifier.transparency.witness import request_text

    connection = http.client.HTTPConnection(host, port, timeout=5)
    done = 0
    body = request_text(3, [], note)  # the witness cosigned size 3 before the load began
    while time.monotonic() < until and done < 10_000:
        start = time.monotonic()
        try:
            connection.request("POST", "/add-checkpoint", body=body)
            answer = connection.getresponse()
            answer.read()
            status = answer.status
        except (OSError, http.client.HTTPException):
            status = -1
            connection.close()
            connection = http.client.HTTPConnection(host, port, timeout=5)
        with lock:
            out.append((time.monotonic() - start, status))
        done += 1
        time.sleep(pause)
    connection.close()


def _slow(host: str, port: int, until: float, cut: list, lock: threading.Lock) -> None:
    sock = socket.create_connection((host, port), timeout=5)
    opened = time.monotonic()
    try:
        sock.sendall(b"POST /add-checkpoint HTTP/1.1\r\nHost: x\r\n")
        while time.monotonic() < until:
            time.sleep(1)
            sock.sendall(b"X")
            sock.setblocking(False)
            try:
                if sock.recv(1) == b"":  # the witness closed it
                    raise ConnectionResetError
            except BlockingIOError:
                pass
            finally:
                sock.setblocking(True)
    except OSError:
        with lock:
            cut.append(time.monotonic() - opened)
    finally:
        sock.close()


def load(seconds: float = 30.0, honest: int = 100, slow: int = 100, *, request_timeout: float = 10.0,
         pause: float = 0.5) -> dict:
    """Run the witness and the clients for ``seconds``; the figures of the module's text."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        note, log_vkey = _log(root)
        server = subprocess.Popen([sys.executable, "-m", "verifier", "witness", "serve", "--state", str(root / "st"),
                                   "--key", str(root / "w.pem"), "--name", "w.example/witness", "--log-key",
                                   str(log_vkey), "--listen", "127.0.0.1:0", "--request-timeout",
                                   str(request_timeout)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                  env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            ready = server.stdout.readline()
            host, port = ready.split("http://")[1].split("/")[0].split(":")
            from verifier.transparency.witness import request_text

            first = http.client.HTTPConnection(host, int(port), timeout=10)
            first.request("POST", "/add-checkpoint", body=request_text(0, [], note))
            assert first.getresponse().status == 200, "the witness did not cosign the log's first checkpoint"
            first.close()
            until = time.monotonic() + seconds
            answers: list = []
            cut: list = []
            lock = threading.Lock()
            threads = [threading.Thread(target=_slow, args=(host, int(port), until, cut, lock)) for _ in range(slow)]
            threads += [threading.Thread(target=_honest, args=(host, int(port), note, until, answers, lock, pause))
                        for _ in range(honest)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=seconds + 30)
        finally:
            server.terminate()
            server.wait(timeout=30)
    ok = [latency for latency, status in answers if status == 200]
    return {"seconds": seconds, "honest_clients": honest, "slow_clients": slow, "requests": len(answers),
            "answered_200": len(ok), "failed": len(answers) - len(ok),
            "pause_s": pause, "median_answer_s": sorted(ok)[len(ok) // 2] if ok else None,
            "p99_answer_s": sorted(ok)[int(len(ok) * 0.99)] if ok else None,
            "slowest_answer_s": max(ok) if ok else None, "slow_clients_cut": len(cut),
            "cut_after_s": [min(cut), max(cut)] if cut else None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.witness_load", description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--honest", type=int, default=100)
    p.add_argument("--slow", type=int, default=100)
    p.add_argument("--request-timeout", type=float, default=10.0, help="the witness's (verifier witness serve)")
    p.add_argument("--pause", type=float, default=0.5, help="each honest client's pause between its requests")
    args = p.parse_args(argv)
    print(json.dumps(load(args.seconds, args.honest, args.slow, request_timeout=args.request_timeout,
                          pause=args.pause), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
