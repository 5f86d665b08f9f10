"""A witness that survives the internet (issue 52, item 3): verifier witness serve on 127.0.0.1, served by waitress.

Keep-alive, GET /<sha256(origin)>/checkpoint, a Content-Length of 5,000 digits answered (it ended in a traceback and
a dropped connection), a bounded load test: honest clients answered within a second while slow ones are cut off, and
one hostile client's idle connections, held, reopened or past the file limit, never keeping an honest request
waiting (issue 59, item 3).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import socket
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from test_witness import ORIGIN, _key, _log, _raw, _vkey_file
from verifier.transparency.cosignature import verify_cosignature
from verifier.transparency.note import COSIGNATURE_TYPE, ED25519_TYPE, parse_note
from verifier.transparency.witness import request_text


@pytest.fixture()
def witness(tmp_path):
    """A running witness of a 3-entry log: its host, port, the log's checkpoint note, and the witness's key."""
    server, host, port, note, key = _serving(tmp_path, timeout=2)
    try:
        yield host, port, note, key
    finally:
        _stop(server)


def test_keep_alive_and_the_last_cosigned_checkpoint(witness):
    host, port, note, key = witness
    connection = http.client.HTTPConnection(host, port, timeout=10)
    path = f"/{hashlib.sha256(ORIGIN.encode()).hexdigest()}/checkpoint"
    connection.request("GET", path)
    answer = connection.getresponse()
    assert answer.status == 404 and answer.read().startswith(b"this witness has cosigned no checkpoint")
    connection.request("POST", "/add-checkpoint", body=request_text(0, [], note))
    first = connection.getresponse()
    first.read()
    sock = connection.sock
    connection.request("POST", "/add-checkpoint", body=request_text(3, [], note))  # the same connection: keep-alive
    again = connection.getresponse()
    line = again.read().decode()
    assert first.status == again.status == 200 and connection.sock is sock and answer.version == 11
    connection.request("GET", path)
    served = connection.getresponse()
    body = served.read()
    assert served.status == 200
    cosigned = parse_note(body, "served")
    assert cosigned.text == parse_note(note, "log").text and cosigned.signatures[0][0] == ORIGIN
    assert verify_cosignature(cosigned, "w.example/witness", _raw(key), "served") is not None
    assert line.startswith("\u2014 w.example/witness ")
    connection.request("PUT", "/add-checkpoint", body=b"x")
    refused = connection.getresponse()
    assert refused.status == 405 and refused.getheader("Allow") == "POST"
    refused.read()
    connection.request("GET", "/elsewhere")
    assert connection.getresponse().status == 404
    connection.close()


@pytest.mark.parametrize("length", ["9" * 5000, "\u00b2", "-1", "70000"])
def test_a_length_no_request_may_have_is_answered_and_the_witness_serves_on(witness, length):
    """A Content-Length of 5,000 digits ended in a traceback and a dropped connection."""
    host, port, note, _ = witness
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(f"POST /add-checkpoint HTTP/1.1\r\nHost: w\r\nContent-Length: {length}\r\n\r\n".encode()
                     + b"old 0\n\n")
        head = sock.recv(4096).decode("latin-1")
    assert head.startswith(("HTTP/1.1 400", "HTTP/1.1 413")), head
    connection = http.client.HTTPConnection(host, port, timeout=10)
    connection.request("POST", "/add-checkpoint", body=request_text(0, [], note))
    assert connection.getresponse().status == 200
    connection.close()


def test_honest_requests_are_answered_within_a_second_while_slow_clients_are_cut_off():
    """A bounded load test on 127.0.0.1 (benchmarks/witness_load.py; its 30-second run with 200 clients is in
    docs/performance.md): 40 honest clients on keep-alive connections beside 40 that trickle a byte a second and
    never finish their request. Every honest request is answered 200 within a second; every slow client is cut off
    after the witness's request timeout (2 s here)."""
    from benchmarks.witness_load import load

    found = load(8.0, honest=40, slow=40, request_timeout=2.0)
    assert found["failed"] == 0 and found["answered_200"] > 400, found
    assert found["slowest_answer_s"] < 1.0, found
    assert found["slow_clients_cut"] == 40 and found["cut_after_s"][1] < 6.0, found


def test_a_head_request_gets_headers_alone_and_the_connection_stays_in_step(witness):
    """Issue 59, item 3: HEAD /<hash>/checkpoint sent the note's body too, which a kept-alive connection then read as
    the next answer. HEAD gets the GET's status and length, and no body; the next GET on the connection is whole:
    the log's note with the witness's cosignature, which is made afresh for each answer (its timestamp moves on
    a second boundary, so the note is compared without it)."""
    host, port, note, _ = witness
    connection = http.client.HTTPConnection(host, port, timeout=10)
    path = f"/{hashlib.sha256(ORIGIN.encode()).hexdigest()}/checkpoint"
    connection.request("POST", "/add-checkpoint", body=request_text(0, [], note))
    connection.getresponse().read()
    connection.request("GET", path)
    got = connection.getresponse()
    body = got.read()
    connection.request("HEAD", path)
    head = connection.getresponse()
    assert head.status == 200 and head.read() == b"" and head.getheader("Content-Length") == str(len(body))
    connection.request("GET", path)  # the same connection: the answer is the note, not HEAD's stray body
    again = connection.getresponse()
    assert again.status == 200 and _without_cosignature(again.read()) == _without_cosignature(body)
    missing = "/" + "0" * 64 + "/checkpoint"
    connection.request("HEAD", missing)
    gone = connection.getresponse()
    assert gone.status == 404 and gone.read() == b""
    connection.request("GET", path)
    assert _without_cosignature(connection.getresponse().read()) == _without_cosignature(body)
    connection.close()


def _without_cosignature(body: bytes) -> tuple:
    """A served checkpoint note less the witness's own cosignature: its text and the log's signature, and the
    witness's signer, whose timestamp and signature are fresh in each answer."""
    served = parse_note(body, "served")
    assert len(served.signatures) == 2
    return served.text, served.signatures[0], served.signatures[1][0]


def _serving(tmp_path, files: int | None = None, timeout: float = 10.0):
    """A witness of a 3-entry log in its own process (its file limit ``files`` where given, its request timeout
    ``timeout``): the process, its host and port, the log's checkpoint note and the witness's key."""
    import resource

    log_key = Ed25519PrivateKey.generate()
    _vkey_file(tmp_path / "log.vkey", ORIGIN, ED25519_TYPE, log_key)
    key = _key(tmp_path / "w.pem")
    note = _log(tmp_path / "log", log_key, [f"entry {i}\n".encode() for i in range(3)])

    def limit() -> None:
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    server = subprocess.Popen([sys.executable, "-m", "verifier", "witness", "serve", "--state", str(tmp_path / "st"),
                               "--key", str(tmp_path / "w.pem"), "--name", "w.example/witness", "--log-key",
                               str(tmp_path / "log.vkey"), "--listen", "127.0.0.1:0", "--request-timeout",
                               str(timeout)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=limit, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    ready = server.stdout.readline()
    assert ready.startswith("witness w.example/witness serving on http://127.0.0.1:"), server.stderr.read()
    host, port = ready.split("http://")[1].split("/")[0].split(":")
    return server, host, int(port), note, key


def _honest_seconds(host: str, port: int, note: bytes, times: int = 5) -> list[float]:
    """How long each of ``times`` honest clients waits for its answer: a new connection, add-checkpoint, 200."""
    import time

    waited = []
    for _ in range(times):
        start = time.monotonic()
        connection = http.client.HTTPConnection(host, port, timeout=20)
        connection.request("POST", "/add-checkpoint", body=request_text(3, [], note))
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 200
        connection.close()
        waited.append(time.monotonic() - start)
    return waited


def _stop(server) -> str:
    server.terminate()
    assert server.wait(timeout=30) == 0
    return server.stderr.read()


@pytest.mark.parametrize("reopen", [False, True], ids=["held", "reopened"])
def test_one_client_s_idle_connections_never_keep_an_honest_request_waiting(tmp_path, reopen):
    """Issue 59, item 3: 600 idle connections from one client (the witness holds 512) left an honest request
    unanswered for 8 s, and reopened as they closed, 6 to 11 s. The witness now closes the longest-idle connection
    to take a new one: every honest request is answered within 2 s, with the connections held or reopened."""
    import threading
    import time

    server, host, port, note, _ = _serving(tmp_path)
    first = http.client.HTTPConnection(host, port, timeout=10)
    first.request("POST", "/add-checkpoint", body=request_text(0, [], note))
    assert first.getresponse().status == 200
    first.close()
    held: list[socket.socket] = []
    stop = threading.Event()

    def flood() -> None:
        while not stop.is_set() and len(held) < 600:
            try:
                held.append(socket.create_connection((host, port), timeout=5))
            except OSError:
                time.sleep(0.01)
        while reopen and not stop.is_set():  # every connection the witness closes is opened again
            for i, sock in enumerate(held):
                sock.setblocking(False)
                try:
                    closed = sock.recv(1) == b""
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if closed and not stop.is_set():
                    sock.close()
                    try:
                        held[i] = socket.create_connection((host, port), timeout=5)
                    except OSError:
                        pass
            time.sleep(0.01)

    flooding = threading.Thread(target=flood)
    flooding.start()
    try:
        deadline = time.monotonic() + 20
        while len(held) < 600 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(held) >= 600
        waited = _honest_seconds(host, port, note)
        assert max(waited) < 2.0, waited
    finally:
        stop.set()
        flooding.join(timeout=30)
        for sock in held:
            sock.close()
        err = _stop(server)
    assert "Traceback" not in err, err


def test_a_file_limit_below_the_connection_cap_leaves_honest_requests_answered(tmp_path):
    """Issue 59, item 3: under ``ulimit -n 64`` 70 idle connections left an honest request unanswered for 20 s and
    printed an ``OSError: Too many open files`` traceback. The witness keeps its connections below its file limit
    (:func:`~verifier.transparency.witness_server.connection_cap`), so it answers within 2 s and says nothing of it."""
    import time

    from verifier.transparency.witness_server import RESERVED_FILES, connection_cap, per_client_cap

    assert connection_cap(512) <= 512 and per_client_cap(32) == 16 and per_client_cap(3) == 2
    server, host, port, note, _ = _serving(tmp_path, files=64)
    held = []
    try:
        first = http.client.HTTPConnection(host, port, timeout=10)
        first.request("POST", "/add-checkpoint", body=request_text(0, [], note))
        assert first.getresponse().status == 200
        first.close()
        for _ in range(70):
            held.append(socket.create_connection((host, port), timeout=5))
        time.sleep(0.5)
        waited = _honest_seconds(host, port, note)
        assert max(waited) < 2.0, waited
    finally:
        for sock in held:
            sock.close()
        err = _stop(server)
    assert "Too many open files" not in err and "Traceback" not in err, err
    assert 64 - RESERVED_FILES == 32  # the cap it held: 32 connections, 16 of them one client's
