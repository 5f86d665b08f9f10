"""The witness over HTTP (c2sp.org/tlog-witness), served by waitress, a well-kept WSGI server.

A witness is exactly the party that must survive a hostile log and a hostile internet, so the HTTP layer is not
written here: waitress parses the requests (HTTP/1.1 with keep-alive, chunked bodies, a bound on headers and
bodies), holds slow connections without a thread each, and hands complete requests to a few worker threads.
Around it, this module sets the bounds:

- a request body of at most :data:`~verifier.transparency.witness.MAX_REQUEST_BYTES` (413 past it, unread);
  headers of at most 16 KiB; a ``Content-Length`` no number holds is a 400;
- at most :data:`CONNECTIONS` connections at once, and never more than the process may open files for
  (:func:`connection_cap`); a connection idle for :data:`IDLE_SECONDS` is closed, and so is one that has not
  finished sending its request after :data:`REQUEST_SECONDS` (a client trickling a byte at a time is cut off as an
  idle one is);
- one client (one address) holds at most half of the connections (:func:`per_client_cap`). A new connection
  past either cap closes the longest-idle connection of that client, or of anyone, that has no request in hand
  (issue 59, item 3): idle connections cannot keep an honest request waiting, and one that is being answered is
  never cut. When every connection is busy, a new one waits to be accepted;
- ``POST /add-checkpoint``: :func:`verifier.transparency.witness.add_checkpoint` on the witness's state folder
  (which it locks: two requests, or a server and ``verifier witness cosign``, never race): 200 and the
  cosignature line, or the protocol's status with one line saying why; a 409 carries the size the witness last
  cosigned as ``text/x.tlog.size``;
- ``GET /<sha256(origin) in hex>/checkpoint``: the last checkpoint it cosigned of that log, with a fresh
  cosignature of its own (404 for a log it has not cosigned).

Every other path is 404, every other method 405. The load test (tests/test_witness_server.py) holds honest
requests to an answer within a second while 100 slow clients are cut off.
"""

from __future__ import annotations

import errno
import hashlib
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from verifier.core.interrupts import start_watching
from verifier.releases.listed_files import ReleaseError
from verifier.transparency.witness import (HTTP_STATUS, MAX_REQUEST_BYTES, Conflict, Cosigner, add_checkpoint,
                                           last_cosigned_note)

__all__ = ["CONNECTIONS", "IDLE_SECONDS", "REQUEST_SECONDS", "Limits", "connection_cap", "longest_idle", "per_client_cap",
           "serve", "witness_app", "witness_server"]

PATH = "/add-checkpoint"
_CHECKPOINT = re.compile(r"/([0-9a-f]{64})/checkpoint")
_LONG_LENGTH = re.compile(rb"(?im)^(content-length:[ \t]*)[0-9]{19,}")
#: connections held at once
CONNECTIONS = 512
#: a connection with nothing to do is closed after this long
IDLE_SECONDS = 10
#: a request not received whole after this long is cut off
REQUEST_SECONDS = 10


#: file descriptors kept for what is not a connection: the standard streams, the listening socket, waitress's
#: trigger pipe, the state folder's lock and files, the interpreter's own
RESERVED_FILES = 32


def connection_cap(wanted: int) -> int:
    """The connections a witness holds at once: ``wanted``, below the process's file limit by
    :data:`RESERVED_FILES` (at least 4), so that accepting one never fails with "Too many open files"."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(4, min(wanted, int(soft) - RESERVED_FILES))


def per_client_cap(cap: int) -> int:
    """The connections one client address holds at once: half of ``cap``, at least 2."""
    return max(2, cap // 2)


@dataclass(frozen=True)
class Limits:
    """What one witness holds: connections at once, and how long a connection may idle or take over a request."""

    connections: int = CONNECTIONS
    idle_seconds: float = IDLE_SECONDS
    request_seconds: float = REQUEST_SECONDS


def witness_app(state: Path, cosigner: Cosigner, logs: dict[str, bytes]) -> Callable:
    """The WSGI application of a witness with the state folder ``state`` for the logs ``logs``."""
    by_hash = {hashlib.sha256(origin.encode()).hexdigest(): origin for origin in logs}

    def answer(start_response, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8",
               extra: tuple = ()) -> list[bytes]:
        start_response(f"{status} {_REASONS[status]}", [("Content-Type", content_type),
                                                        ("Content-Length", str(len(body))), *extra])
        return [body]

    def add(environ, start_response) -> list[bytes]:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return answer(start_response, 400, b"a request states its length in decimal\n")
        if length > MAX_REQUEST_BYTES:
            return answer(start_response, 413, f"a request holds at most {MAX_REQUEST_BYTES} bytes\n".encode())
        body = environ["wsgi.input"].read(length)
        try:
            line = add_checkpoint(state, cosigner, logs, body, "request")
        except Conflict as exc:
            return answer(start_response, 409, f"{exc.known}\n".encode(), "text/x.tlog.size")
        except ReleaseError as exc:
            return answer(start_response, HTTP_STATUS.get(exc.reason, 400), f"{exc.reason}: {exc.message}\n".encode())
        return answer(start_response, 200, line.encode("utf-8"))

    def checkpoint(start_response, digest: str, head: bool) -> list[bytes]:
        """The last checkpoint cosigned of the log ``digest`` names; for HEAD its headers alone: a body after a
        HEAD answer would be read as the next answer on a kept-alive connection (issue 59, item 3)."""
        origin = by_hash.get(digest)
        note = None if origin is None else last_cosigned_note(state, origin, logs[origin], cosigner)
        if note is None:
            sent = answer(start_response, 404, b"this witness has cosigned no checkpoint of that log\n")
        else:
            sent = answer(start_response, 200, note)
        return [] if head else sent

    def app(environ, start_response) -> list[bytes]:
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        if path == PATH:
            if method != "POST":
                return answer(start_response, 405, b"POST /add-checkpoint\n", extra=(("Allow", "POST"),))
            return add(environ, start_response)
        found = _CHECKPOINT.fullmatch(path)
        if found:
            if method not in ("GET", "HEAD"):
                return answer(start_response, 405, b"GET /<sha256(origin)>/checkpoint\n",
                              extra=(("Allow", "GET, HEAD"),))
            return checkpoint(start_response, found.group(1), method == "HEAD")
        return answer(start_response, 404, b"POST /add-checkpoint, or GET /<sha256(origin)>/checkpoint\n")

    return app


_REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
            409: "Conflict", 413: "Content Too Large", 422: "Unprocessable Content"}


def longest_idle(channels, host: str | None = None):
    """Of the connections with no request in hand and nothing to send (of the address ``host``), the one idle
    longest, which a witness may close to make room; None where every one is busy."""
    return min((c for c in channels if not c.requests and getattr(c, "request", None) is None
                and not c.total_outbufs_len and not c.will_close and (host is None or c.addr[0] == host)),
               key=lambda c: c.last_activity, default=None)


def _server_class(limits: Limits, cap: int):
    """The waitress server class of a witness: it bounds a request's header, cuts off a request not received whole
    within ``limits.request_seconds``, and holds ``cap`` connections at most, one address half of them, making room
    for a new one by closing the longest-idle one (:func:`per_client_cap`, :func:`connection_cap`)."""
    from waitress.channel import HTTPChannel
    from waitress.parser import HTTPRequestParser
    from waitress.server import TcpWSGIServer

    class Parser(HTTPRequestParser):
        """A ``Content-Length`` of more digits than any request may have reads as one byte over the limit (413):
        waitress itself turned 5,000 digits into Python's int-conversion ValueError and dropped the connection."""

        def parse_header(self, header_plus: bytes) -> None:
            return super().parse_header(_LONG_LENGTH.sub(rb"\g<1>" + str(MAX_REQUEST_BYTES + 1).encode(), header_plus))

    class Channel(HTTPChannel):
        parser_class = Parser

    each = per_client_cap(cap)

    class Server(TcpWSGIServer):
        """Closes a connection whose request is not received whole within ``limits.request_seconds``, and makes room
        for a new connection by closing the longest-idle one (:func:`per_client_cap`, :func:`connection_cap`)."""

        channel_class = Channel

        started: dict = {}

        def _make_room(self, host: str | None = None) -> bool:
            """Close the longest-idle connection (of ``host``); False where every one is busy."""
            idle = longest_idle(self.active_channels.values(), host)
            if idle is None:
                return False
            idle.handle_close()
            return True

        def readable(self) -> bool:
            now = time.time()
            if now >= self.next_channel_cleanup:
                self.next_channel_cleanup = now + self.adj.cleanup_interval
                self.maintenance(now)
            # accept whenever a slot is free or an idle connection can give its own up
            return self.accepting and (len(self.active_channels) < cap
                                       or longest_idle(self.active_channels.values()) is not None)

        def handle_accept(self) -> None:
            if len(self.active_channels) >= cap and not self._make_room():
                return
            try:
                accepted = self.accept()
            except OSError as exc:  # out of file descriptors after all: free one, and take the connection next turn
                if exc.errno in (errno.EMFILE, errno.ENFILE):
                    self._make_room()
                return
            if accepted is None:
                return
            conn, addr = accepted
            try:
                self.set_socket_options(conn)
            except OSError:
                conn.close()
                return
            addr = self.fix_addr(addr)
            host = addr[0] if isinstance(addr, tuple) else None
            if host is not None and sum(1 for c in self.active_channels.values() if c.addr[0] == host) >= each \
                    and not self._make_room(host):
                conn.close()  # this client holds its share, every one of them busy
                return
            self.channel_class(self, conn, addr, self.adj, map=self._map)

        def maintenance(self, now: float) -> None:
            super().maintenance(now)
            seen = {}
            for channel in list(self.active_channels.values()):
                partial = getattr(channel, "request", None)
                if partial is None:
                    continue
                since = self.started.get(id(channel), (None, now))
                since = since if since[0] is partial else (partial, now)
                seen[id(channel)] = since
                if now - since[1] > limits.request_seconds:
                    channel.will_close = True
            self.started = seen

    return Server


def witness_server(host: str, port: int, state: Path, cosigner: Cosigner, logs: dict[str, bytes],
                   limits: Limits = Limits()):
    """A waitress server bound to ``host:port`` (0: a free port), not yet serving: ``.run()`` serves,
    ``.close()`` stops, ``.effective_host`` and ``.effective_port`` say where."""
    cap = connection_cap(limits.connections)
    state.mkdir(parents=True, exist_ok=True)
    import logging

    from waitress.adjustments import Adjustments

    # waitress warns on stderr each time a request waits for a thread ("Task queue depth"): under load, thousands of
    # lines, which stall the witness once whatever reads its stderr falls behind. Its errors are still said.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)

    adj = Adjustments(host=host, port=port, threads=4, connection_limit=cap,
                      channel_timeout=max(1, int(limits.idle_seconds)),
                      cleanup_interval=1, max_request_body_size=MAX_REQUEST_BYTES, max_request_header_size=16384,
                      asyncore_use_poll=True, ident="permuted-privacy-witness", expose_tracebacks=False)
    return _server_class(limits, cap)(witness_app(state, cosigner, logs), adj=adj)


def serve(host: str, port: int, state: Path, cosigner: Cosigner, logs: dict[str, bytes], *,
          ready: Callable[[str], object], limits: Limits = Limits()) -> None:
    """Serve until interrupted; ``ready`` is told the server's URL once it listens."""
    from verifier.errors import InputIOError

    try:
        server = witness_server(host, port, state, cosigner, logs, limits)
    except OSError as exc:
        raise InputIOError(f"cannot listen there ({exc.strerror})", path=f"{host}:{port}",
                           reason="LISTEN_FAILED") from None
    ready(f"http://{server.effective_host}:{server.effective_port}")
    try:
        server.run()  # waitress ends its loop on Ctrl-C or SIGTERM itself
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    start_watching()  # the way a witness is stopped, not a command cut short
