"""The distributed engine: the data-set checks on a Dask cluster, for tables that outgrow one machine.

``verifier distance`` and ``verifier intruder --engine dask`` (docs/scale.md)
run the same exact computation as the in-process engine, with their tables
cut into partitions:

- :mod:`verifier.distributed.cluster` connects to a scheduler, or starts a
  ``LocalCluster`` for the command and stops it after;
- :mod:`verifier.distributed.partitions` reads a table given as one file or as
  a directory of Parquet parts;
- :mod:`verifier.distributed.block_ranks` ranks partitioned columns with ties
  (value ranges from quantile boundaries, then per-range sorts and counts);
- :mod:`verifier.distributed.slab_search` finds every record's nearest released
  records in rank space, slab by slab, with one exchange across slab edges;
- :mod:`verifier.distributed.engine` puts them together into the same
  :class:`~verifier.core.permutation.PermutedPrivacyReport` as the local engine;
- :mod:`verifier.distributed.reverse_mapping` makes the intruder's Z with the
  local engine's random tie-breaks, and :mod:`verifier.distributed.intruder`
  links X to it and runs the random-match test in the same slab trees.
"""
