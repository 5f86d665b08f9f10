"""Anonymization methods (SPEC section 7): one module per method, the base they share, a registry, the chain.

- :mod:`~publisher.methods.base`: the :class:`Method` ABC, :class:`MethodResult`, parameter parsing;
- one module per method: additive noise, rank swapping, microaggregation,
  reverse mapping (paper 003), randomized response (paper 000), SD
  k-anonymity (paper 001), multi-sensitive generalization (paper 002), random
  attribute replacement (paper 004);
- :mod:`~publisher.methods.registry`: every method by name;
- :mod:`~publisher.methods.chain`: a chain of methods, then the shuffle.
"""

from publisher.methods.additive_noise import AdditiveNoise
from publisher.methods.base import Method, MethodResult
from publisher.methods.chain import Anonymized, anonymize
from publisher.methods.frames import frame_rows, frame_to_keys, keys_to_frame
from publisher.methods.microaggregation import Microaggregation
from publisher.methods.multi_sensitive import MultiSensitiveGeneralization
from publisher.methods.random_replacement import RandomAttributeReplacement
from publisher.methods.randomized_response import RandomizedResponse
from publisher.methods.rank_swapping import RankSwapping
from publisher.methods.registry import METHODS, NUMERIC_METHODS, known_methods, make_method
from publisher.methods.reverse_mapping import ReverseMapping
from publisher.methods.sd_anonymity import SDKAnonymity

__all__ = [
    "METHODS", "NUMERIC_METHODS", "AdditiveNoise", "Anonymized", "Method", "MethodResult", "Microaggregation",
    "MultiSensitiveGeneralization", "RandomAttributeReplacement", "RandomizedResponse", "RankSwapping",
    "ReverseMapping", "SDKAnonymity", "anonymize", "frame_rows", "frame_to_keys", "keys_to_frame",
    "known_methods", "make_method",
]
