"""permuted-privacy publisher: what a data protector runs before and while releasing.

The publisher may import the verifier (it computes its claims with the
verifier's own code); the verifier never imports the publisher. In a
notebook: ``publisher.anonymize(frame, method, **params)`` and
``publisher.release(frame, method, key=..., out=..., dataset_id=...)``
(docs/api.md).
"""

from publisher.api import anonymize, release
from publisher.version import __version__

__all__ = ["__version__", "anonymize", "release"]
