"""One contract for the command line and the page, proven by a differential fuzz (issue 52, item 2).

A fixed-seed slice of ``python -m benchmarks fuzz``: 1,000 cases (500 until issue 61 added a base release, whose
share of the draws left the log's rarer refusals unreached in 500), each an honest release of the project's with one
signed input mutated and signed again (a manifest value in another form or type, the manifest's bytes, the data
package, a data cell, her record, her verdict policy, a logged release's proof: its inclusion hashes, checkpoint
and cosignatures, and her log policy), given to ``verifier check`` in this process and to the page's code, as
``verifier page`` writes it, in Node.js. Both must accept or refuse alike, with the same reason, and give the same
level, headline and figures when they accept. The 10,000-case run is in docs/performance.md.
"""

from __future__ import annotations

import shutil

import pytest


def test_a_thousand_mutated_releases_get_one_answer_from_both_verifiers(monkeypatch, tmp_path):
    if shutil.which("node") is None:
        pytest.skip("needs Node.js (installed on this project's machines)")
    from benchmarks.fuzz import run

    report = run(1000, seed=7)
    assert report["disagreements"] == 0, report["examples"]
    outcomes = report["outcomes"]
    # the slice reaches acceptance and the main refusals, so the agreement is not of one kind only
    assert outcomes.get("accepted", 0) >= 50 and outcomes.get("SCHEMA_INVALID", 0) >= 50, outcomes
    assert all(outcomes.get(r, 0) >= 5 for r in ("DATAPACKAGE_MISMATCH", "DATA_MALFORMED", "MANIFEST_MALFORMED",
                                                 "RECORD_VALUE_INVALID")), outcomes
    # and the log's refusals: a malformed proof, a bad inclusion proof or log signature, too few cosignatures
    assert outcomes.get("LOG_MALFORMED", 0) >= 10, outcomes
    # issue 59, item 1's classes: columns named as JavaScript's own members (checked alike), Unicode spaces and byte-
    # order marks, numbers at 2^53, cells at the field limit
    classes = report["classes"]
    assert classes.get("name: accepted", 0) >= 10 and classes.get("unicode: refused", 0) >= 10, classes
    assert classes.get("2^53: refused", 0) >= 10 and classes.get("field size: refused", 0) >= 1, classes
    assert not any(key.endswith("disagree") for key in classes), classes
    assert all(outcomes.get(r, 0) >= 1 for r in ("LOG_PROOF_INVALID", "LOG_SIGNATURE", "WITNESS_QUORUM")), outcomes
    # issue 61: another tool's post-randomized output, its transition matrices mutated among the manifest's values
    assert classes.get("post-randomized: accepted", 0) >= 10 and classes.get("post-randomized: refused", 0) >= 10, \
        classes
