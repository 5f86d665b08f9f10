"""The release log (issue 39): an append-only Merkle tree of releases in the C2SP formats.

- :mod:`~verifier.transparency.merkle`: RFC 9162 section 2.1 hashing, inclusion and consistency proofs;
- :mod:`~verifier.transparency.note`: signed notes (c2sp.org/signed-note) and checkpoints
  (c2sp.org/tlog-checkpoint), Ed25519;
- :mod:`~verifier.transparency.tiles`: the log as static files (c2sp.org/tlog-tiles);
- :mod:`~verifier.transparency.proof`: a release's proof file (c2sp.org/tlog-proof) and its leaf.
"""
