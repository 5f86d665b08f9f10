"""``--engine local|dask`` and the cluster options, shared by the commands that can run on a Dask cluster."""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from typing import Iterator

from verifier.distributed.cluster import check_cluster_options, dask_client, require_dask
from verifier.errors import UsageError
from verifier.frontend.arguments import count

__all__ = ["add_engine_args", "engine_client"]


DEFAULT_WHAT = ("the results are the same. The tables may then be directories of Parquet parts, read by the workers")


def add_engine_args(p: argparse.ArgumentParser, *, what: str = DEFAULT_WHAT) -> None:
    """The engine options; ``what`` says what runs on the cluster and what stays, for this command."""
    g = p.add_argument_group("engine (docs/scale.md)")
    g.add_argument("--engine", choices=("local", "dask"), default="local",
                   help="local: this process (default); dask: a Dask cluster, for tables that outgrow one machine "
                   f"(needs the extra permuted-privacy[dask]); {what}")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --engine dask, a running scheduler (tcp://host:8786); default: a local cluster "
                   "started and stopped by the command")
    g.add_argument("--workers", type=count("workers"), metavar="N",
                   help="worker processes of the local cluster (default 2; at most this machine's cores)")
    g.add_argument("--memory-limit", metavar="SIZE",
                   help="memory of each local worker (4GB, 512MiB; at least 256MiB; default: the machine's memory "
                   "shared out); a worker spills to disk beyond it")


@contextmanager
def engine_client(args: argparse.Namespace) -> Iterator:
    """The Dask client ``--engine dask`` asks for; cluster options without it are a usage error."""
    if args.engine != "dask":
        if args.scheduler or args.workers is not None or args.memory_limit:
            raise UsageError("--scheduler, --workers and --memory-limit go with --engine dask")
        yield None
        return
    require_dask()
    check_cluster_options(args.scheduler, args.workers, args.memory_limit)
    with dask_client(args.scheduler, workers=args.workers, memory_limit=args.memory_limit) as client:
        yield client
