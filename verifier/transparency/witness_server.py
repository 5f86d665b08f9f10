"""The witness over HTTP: C2SP tlog-witness's ``POST /add-checkpoint``, served with the standard library.

Each request is answered by :func:`verifier.transparency.witness.add_checkpoint` on the witness's state folder
(which it locks, so that two requests, or a server and ``verifier witness cosign``, never race): 200 and the
cosignature line, or the protocol's refusal status with one line saying why; a 409 carries the size the witness
last cosigned as ``text/x.tlog.size``. Nothing else is served, and a request body over 64 KiB is refused unread.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

from verifier.core.interrupts import start_watching
from verifier.releases.listed_files import ReleaseError
from verifier.transparency.witness import HTTP_STATUS, MAX_REQUEST_BYTES, Conflict, Cosigner, add_checkpoint

__all__ = ["serve", "witness_server"]

PATH = "/add-checkpoint"


def _handler(state: Path, cosigner: Cosigner, logs: dict[str, bytes]) -> type[BaseHTTPRequestHandler]:
    class AddCheckpoint(BaseHTTPRequestHandler):
        server_version = "permuted-privacy-witness"

        def _answer(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
            if self.path != PATH:
                return self._answer(404, b"only POST /add-checkpoint is served\n")
            length = self.headers.get("Content-Length", "")
            stated = length.isascii() and length.isdigit()
            if not stated or int(length) > MAX_REQUEST_BYTES:
                return self._answer(400 if not stated else 413,
                                    f"a request states its length, at most {MAX_REQUEST_BYTES} bytes\n".encode())
            body = self.rfile.read(int(length))
            try:
                line = add_checkpoint(state, cosigner, logs, body, "request")
            except Conflict as exc:
                return self._answer(409, f"{exc.known}\n".encode(), "text/x.tlog.size")
            except ReleaseError as exc:
                return self._answer(HTTP_STATUS.get(exc.reason, 400), f"{exc.reason}: {exc.message}\n".encode())
            self._answer(200, line.encode("utf-8"))

        def do_GET(self) -> None:  # noqa: N802
            self._answer(405, b"POST /add-checkpoint\n")

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - http.server's signature
            pass  # requests carry no secret, but the witness prints only what it is asked to

    return AddCheckpoint


def witness_server(host: str, port: int, state: Path, cosigner: Cosigner,
                   logs: dict[str, bytes]) -> ThreadingHTTPServer:
    """A server bound to ``host:port`` (0: a free port), not yet serving."""
    state.mkdir(parents=True, exist_ok=True)
    return ThreadingHTTPServer((host, port), _handler(state, cosigner, logs))


def serve(host: str, port: int, state: Path, cosigner: Cosigner, logs: dict[str, bytes], *,
          ready: Callable[[str], object]) -> None:
    """Serve until interrupted; ``ready`` is told the server's URL once it listens."""
    from verifier.errors import InputIOError

    try:
        server = witness_server(host, port, state, cosigner, logs)
    except OSError as exc:
        raise InputIOError(f"cannot listen there ({exc.strerror})", path=f"{host}:{port}",
                           reason="LISTEN_FAILED") from None
    with server:
        bound_host, bound_port = server.server_address[:2]
        ready(f"http://{bound_host}:{bound_port}")
        try:
            server.serve_forever()
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the way a witness is stopped, not a command cut short
            start_watching()
