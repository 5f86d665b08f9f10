"""permuted-privacy publisher: what a data protector runs before and while releasing.

The publisher may import the verifier (it computes its claims with the
verifier's own code); the verifier never imports the publisher.
"""

__version__ = "0.1.0"
