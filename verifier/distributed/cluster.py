"""Where the distributed engine runs: an office's own Dask scheduler, or a ``LocalCluster`` for one command.

Dask is an optional extra (``pip install 'permuted-privacy[dask]'``). Without
it ``--engine dask`` fails with one line naming the extra (``DASK_MISSING``,
exit 4: the environment lacks it), never an import traceback.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import logging
import os
import re
import socket
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from verifier.errors import InputIOError, InvalidInputError, UsageError, VerifierError
from verifier.text import literal

__all__ = ["DASK_EXTRA", "MIN_WORKER_MEMORY", "CONNECT_TIMEOUT", "check_cluster_options", "dask_client",
           "default_pieces", "on_cluster", "require_dask"]

#: what to install for the distributed engine
DASK_EXTRA = "permuted-privacy[dask]"
#: the least memory a worker is given: below it a worker pauses on its first part
MIN_WORKER_MEMORY = 256 << 20
#: how long a command waits for a running scheduler
CONNECT_TIMEOUT = "20s"
#: how long a command waits for its own local cluster to stop, in seconds
CLOSE_TIMEOUT = 20
_ADDRESS = re.compile(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?):[0-9]{1,5}")


def check_cluster_options(scheduler: str | None, workers: int | None, memory_limit: str | None) -> None:
    """Refuse, before any connection: an address that is no ``tcp://host:port`` or ``tls://host:port``, more
    local workers than this machine has cores, or less than :data:`MIN_WORKER_MEMORY` for a worker."""
    if scheduler is not None:
        match = _ADDRESS.fullmatch(scheduler)
        if match is None or not 0 < int(scheduler.rsplit(":", 1)[1]) < 65536:
            raise UsageError(f"--scheduler takes tcp://HOST:PORT or tls://HOST:PORT, got {scheduler!r}")
        if scheduler.startswith("tls://") and not _tls_configured():
            raise UsageError("--scheduler tls://... needs Dask's TLS settings: distributed.comm.tls.ca-file, "
                             ".client.cert and .client.key in the Dask configuration (or the "
                             "DASK_DISTRIBUTED__COMM__TLS__CA_FILE, __CLIENT__CERT and __CLIENT__KEY variables)")
    cores = os.cpu_count() or 1
    if workers is not None and not 1 <= workers <= cores:
        raise UsageError(f"--workers is from 1 to this machine's {cores} cores, got {workers}; a larger cluster is "
                         "a running scheduler (--scheduler)")
    if memory_limit is not None:
        from dask.utils import parse_bytes

        try:
            size = parse_bytes(memory_limit)
        except (ValueError, TypeError):
            raise UsageError(f"--memory-limit takes a size such as 4GB or 512MiB, got {memory_limit!r}") from None
        if size < MIN_WORKER_MEMORY:
            raise UsageError(f"--memory-limit {memory_limit} is below the {MIN_WORKER_MEMORY >> 20} MiB a worker needs")


def _tls_configured() -> bool:
    """Whether Dask is configured with the certificates a tls:// connection needs (else it fails with a TypeError)."""
    import dask

    return all(dask.config.get(f"distributed.comm.tls.{key}", None) for key in ("ca-file", "client.cert"))


def _cluster_failure(exc: BaseException) -> bool:
    """A failure of the cluster rather than of the command: a worker killed, a connection lost, a timeout."""
    return (type(exc).__module__.split(".")[0] in ("distributed", "dask", "tornado")
            or isinstance(exc, (TimeoutError, concurrent.futures.CancelledError, asyncio.CancelledError,
                                ConnectionError)))


def require_dask() -> None:
    """``DASK_MISSING`` (exit 4) unless ``dask.distributed`` can be imported."""
    try:
        importlib.import_module("dask.distributed")
    except ImportError:
        raise InputIOError(f"--engine dask needs Dask's distributed scheduler: pip install '{DASK_EXTRA}'",
                           reason="DASK_MISSING") from None


def default_pieces(client) -> int:
    """Twice the cluster's workers (at least 2): how many parts, value ranges and slabs work is cut into by default."""
    return 2 * max(1, len(client.scheduler_info().get("workers", {})))


def on_cluster(client, parts: list) -> list:
    """Futures of ``parts``: arrays are scattered to the workers, futures kept as they are."""
    return [client.scatter(p) if isinstance(p, np.ndarray) else p for p in parts]


@contextmanager
def dask_client(scheduler: str | None = None, *, workers: int | None = None,
                memory_limit: str | None = None) -> Iterator:
    """A ``dask.distributed.Client``: to ``scheduler`` (``tcp://host:8786``), or to a ``LocalCluster`` of its own.

    The local cluster has ``workers`` worker processes (default 2) of one
    thread each, each with ``memory_limit`` (``4GB``, or ``auto``: the
    machine's memory shared out), and is stopped when the block ends.
    Dask's own log lines are kept to errors, so that the command's output
    stays the command's.
    """
    require_dask()
    from dask.distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    if scheduler is not None:
        if workers is not None or memory_limit is not None:
            raise InvalidInputError("--workers and --memory-limit size a local cluster; a running scheduler's "
                                    "workers are sized where they are started", reason="PARAMETER_INVALID")
        _answers_as_dask(scheduler)
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except MemoryError:  # a length read from another protocol's bytes (the probe passed, the server changed)
            raise InputIOError("the server at this address does not answer as a Dask scheduler",
                               path=scheduler, reason="SCHEDULER_NOT_DASK") from None
        except (OSError, TimeoutError) as exc:
            raise InputIOError(f"cannot reach the Dask scheduler within {CONNECT_TIMEOUT} ({str(exc)[:200]})",
                               path=scheduler, reason="SCHEDULER_UNREACHABLE") from None
        with client, _failures(scheduler):
            yield client
        return
    if workers is not None and workers < 1:
        raise InvalidInputError("--workers is at least 1", reason="PARAMETER_INVALID")
    cluster = LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                           memory_limit=memory_limit or "auto", dashboard_address=":0")
    try:
        client = Client(cluster)
        try:
            with _failures("the local cluster"):
                yield client
        finally:
            _stop(client)
    finally:
        _stop(cluster)


#: the longest first message a Dask scheduler sends (its handshake is well under a kilobyte)
_HANDSHAKE_MOST = 1 << 20


def _answers_as_dask(scheduler: str) -> None:
    """Refuse a ``tcp://`` address where another server listens (``SCHEDULER_NOT_DASK``, exit 4).

    A Dask scheduler writes its handshake as soon as a connection opens: a message of a few hundred bytes,
    led by its length as 8 little-endian bytes. Dask's client reads such a length from whatever the server
    sends first, so an SSH banner became a request for exabytes (``OUT_OF_MEMORY``), and a web server, which
    waits for a request, held the command past its connect timeout. A ``tls://`` scheduler speaks TLS first
    and is left to Dask.
    """
    if not scheduler.startswith("tcp://"):
        return
    host, port = scheduler[len("tcp://"):].rsplit(":", 1)
    wait = float(CONNECT_TIMEOUT.rstrip("s"))
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=wait) as sock:
            first = b""
            while len(first) < 8:
                got = sock.recv(8 - len(first))
                if not got:
                    break
                first += got
    except socket.timeout:
        raise InputIOError(f"the server at this address sent nothing within {CONNECT_TIMEOUT}; a Dask scheduler "
                           "greets a client at once: is it a Dask scheduler's address?", path=scheduler,
                           reason="SCHEDULER_NOT_DASK") from None
    except OSError as exc:
        raise InputIOError(f"cannot reach the Dask scheduler ({exc.strerror or exc})", path=scheduler,
                           reason="SCHEDULER_UNREACHABLE") from None
    if len(first) < 8 or int.from_bytes(first, "little") > _HANDSHAKE_MOST:
        raise InputIOError("the server at this address does not answer as a Dask scheduler (it sent "
                           f"{literal(first.decode('latin-1'))!r}); give the scheduler's own address, which "
                           "dask scheduler prints as it starts", path=scheduler, reason="SCHEDULER_NOT_DASK")


def _stop(part) -> None:
    """Close a client or a local cluster of our own; a failure to close never hides the command's outcome.

    A worker that died a moment ago may still be restarting under its nanny,
    and closing then raises inside Dask (``can only join a started process``,
    ``ConnectionPool is closed``). The worker processes are the command's
    children and end with it, so such a failure is logged for ``--verbose``
    and otherwise dropped.
    """
    try:
        part.close(timeout=CLOSE_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - whatever Dask raises while closing, the result stands
        logging.getLogger(__name__).debug("the local Dask cluster did not stop cleanly: %r", exc)


@contextmanager
def _failures(where: str) -> Iterator[None]:
    """Every failure of the cluster as one line (``CLUSTER_FAILED``, exit 4), never a Dask traceback."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - only the cluster's own failures are mapped; the rest go on
        if isinstance(exc, VerifierError) or not _cluster_failure(exc):
            raise
        raise InputIOError(f"the Dask cluster failed: {type(exc).__name__}: {str(exc)[:200] or 'no message'}",
                           path=where, reason="CLUSTER_FAILED") from None
