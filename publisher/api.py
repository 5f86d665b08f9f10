"""The publisher for notebooks: anonymize a DataFrame, or publish a signed release of it.

The same methods and the same release as ``publisher anonymize`` and
``publisher release``, over the same core. Parameters are keyword arguments
named as on the command line (``relative_sd=0.8``, ``k=5``); a chained method
takes its own as ``then={"reverse_mapping": {}}``.

>>> import pandas as pd, publisher
>>> x = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
>>> sorted(publisher.anonymize(x, "microaggregation", k=3, seed=1).released["a"])
[2.0, 2.0, 2.0, 5.0, 5.0, 5.0]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from publisher.degenerate import releasable_chain
from publisher.methods import Anonymized, anonymize as _anonymize, make_method
from publisher.keys import load_private_key
from publisher.signed_release import make_release
from verifier.data.schema import Schema
from verifier.data.schema_file import load_schema
from verifier.data.tables import table_from_frame
from verifier.errors import InvalidInputError

__all__ = ["anonymize", "release", "release_external"]


def _chain(method: str, params: Mapping[str, Any], then: Mapping[str, Mapping[str, Any]] | None,
           allow_degenerate: bool) -> list:
    chain = [make_method(method, params, allow_degenerate=allow_degenerate)]
    for name, own in (then or {}).items():
        chain.append(make_method(name, own, allow_degenerate=allow_degenerate))
    return chain


def _table(frame: pd.DataFrame, schema: Schema | str | Path | None):
    if isinstance(schema, (str, Path)):
        schema = load_schema(schema)
    return table_from_frame(frame, schema, name="the input")


def anonymize(frame: pd.DataFrame, method: str, *, schema: Schema | str | Path | None = None,
              then: Mapping[str, Mapping[str, Any]] | None = None, seed: int | None = None,
              allow_degenerate: bool = False, **params: Any) -> Anonymized:
    """Run ``method`` (and the methods of ``then``, in order) on ``frame``; rows shuffled with the seed.

    For experiments, like ``publisher anonymize``: the result's ``released``
    is the shuffled table, ``table`` the same rows in the input's order (for
    :func:`verifier.intruder` with ``paired=True``), ``steps`` each method's
    parameters and metrics. ``seed`` ``None`` draws from the operating
    system's entropy.
    """
    table = _table(frame, schema)
    chain = _chain(method, params, then, allow_degenerate)
    return _anonymize(table.to_frame(), table.schema, chain, random_state=seed)


def release(frame: pd.DataFrame, method: str, *, key: str | Path, out: str | Path, dataset_id: str,
            schema: Schema | str | Path | None = None, then: Mapping[str, Mapping[str, Any]] | None = None,
            passphrase: bytes | None = None, release_version: int = 1, data_format: str = "csv",
            alpha: float = 0.01, samples: int = 10_000, seed: int | None = None,
            allow_degenerate: bool = False, allow_uninformative: bool = False, weight_column: str | None = None,
            metadata: Mapping[str, str] | None = None, protector_report: str | Path | None = None,
            publish_protector_figures: bool = False, **params: Any) -> Path:
    """Anonymize, assess, sign and publish ``frame`` as ``publisher release`` does; returns the release directory.

    ``key`` is the private key file (``publisher keygen``), ``passphrase`` its
    passphrase if it is encrypted. The directory ``out`` must not exist; it
    appears whole or not at all. Verify the result with
    :func:`verifier.open_release` and the public key. ``weight_column`` names
    the frame's sampling weights (not released as an attribute; published in
    ``weights.csv``); ``metadata`` holds publisher, contact, purpose and license.
    The link shares that need the secret row pairing are written to
    ``protector_report`` (default ``OUT.protector.json``, mode 0600) and stay
    out of the manifest unless ``publish_protector_figures``.
    """
    chain = _chain(method, params, then, allow_degenerate)
    releasable_chain(chain)
    signing_key = load_private_key(key, passphrase)
    weights = None
    if weight_column is not None:
        if weight_column not in frame.columns:
            raise InvalidInputError(f"weight_column {weight_column!r} is not a column of the frame",
                                    reason="COLUMN_MISSING")
        weights = pd.to_numeric(frame[weight_column], errors="coerce").to_numpy(dtype="float64")
        frame = frame.drop(columns=[weight_column])
    table = _table(frame, schema)
    report = None if publish_protector_figures else (protector_report or f"{str(out).rstrip('/')}.protector.json")
    return make_release(table, chain, signing_key, out, dataset_id=dataset_id, release_version=release_version,
                        seed=seed, alpha=alpha, samples=samples, data_format=data_format, metadata=metadata,
                        publish_protector_figures=publish_protector_figures, protector_report=report,
                        weight_column=weight_column, weights=weights, allow_degenerate=allow_degenerate,
                        allow_uninformative=allow_uninformative)


def release_external(frame: pd.DataFrame, anonymized: str | Path, *, produced_by: str, key: str | Path,
                     out: str | Path, dataset_id: str, schema: Schema | str | Path | None = None,
                     configuration: str | Path | None = None, hierarchies: Mapping[str, str | Path] | None = None,
                     transition_matrices: Mapping[str, str | Path] | None = None, passphrase: bytes | None = None,
                     release_version: int = 1, data_format: str = "csv",
                     alpha: float = 0.01, samples: int = 10_000, seed: int | None = None,
                     allow_uninformative: bool = False, metadata: Mapping[str, str] | None = None) -> Path:
    """Publish another tool's output of ``frame`` (the CSV file ``anonymized``) as ``publisher release
    --anonymized`` does; returns the release directory.

    ``produced_by`` names the tool and its version (``"ARX 3.9.2"``); ``configuration`` is its configuration
    file and ``hierarchies`` its ARX hierarchy file by column, each published in the manifest;
    ``transition_matrices`` the transition matrix file of each column it post-randomized (sdcMicro's ``pram``),
    under which the release is judged as randomized response. The rows are
    shuffled with the secret ``seed`` (default: fresh entropy) and the claims follow the model the cells fit
    (docs/methods.md section 5).
    """
    from publisher.methods.external import ExternalTool

    table = _table(frame, schema)
    chain = [ExternalTool.read(table, anonymized, produced_by=produced_by, configuration=configuration,
                               hierarchies=hierarchies, transition_matrices=transition_matrices)]
    releasable_chain(chain)
    return make_release(table, chain, load_private_key(key, passphrase), out, dataset_id=dataset_id,
                        release_version=release_version, seed=seed, alpha=alpha, samples=samples,
                        data_format=data_format, metadata=metadata,
                        protector_report=f"{str(out).rstrip('/')}.protector.json",
                        allow_uninformative=allow_uninformative)
