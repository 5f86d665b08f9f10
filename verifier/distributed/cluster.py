"""Where the distributed engine runs: an office's own Dask scheduler, or a ``LocalCluster`` for one command.

Dask is an optional extra (``pip install 'permuted-privacy[dask]'``). Without
it ``--engine dask`` fails with one line naming the extra (``DASK_MISSING``,
exit 4: the environment lacks it), never an import traceback.
"""

from __future__ import annotations

import importlib
import logging
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from verifier.errors import InputIOError, InvalidInputError

__all__ = ["DASK_EXTRA", "dask_client", "default_pieces", "on_cluster", "require_dask"]

#: what to install for the distributed engine
DASK_EXTRA = "permuted-privacy[dask]"


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
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise InputIOError(f"cannot reach the Dask scheduler ({exc})", path=scheduler,
                               reason="SCHEDULER_UNREACHABLE") from None
        with client:
            yield client
        return
    if workers is not None and workers < 1:
        raise InvalidInputError("--workers is at least 1", reason="PARAMETER_INVALID")
    cluster = LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                           memory_limit=memory_limit or "auto", dashboard_address=":0")
    with cluster, Client(cluster) as client:
        yield client
