"""Anonymization methods (SPEC section 7): one module per method, the base they share, a registry, the chain.

- :mod:`~publisher.methods.base`: the :class:`Method` ABC, :class:`MethodResult`, parameter parsing;
- one module per method: additive noise, rank swapping, microaggregation,
  reverse mapping (paper 003), randomized response (paper 000), SD
  k-anonymity (paper 001), multi-sensitive generalization (paper 002), random
  attribute replacement (paper 004);
- :mod:`~publisher.methods.names`: the methods' names alone, for a command's help;
- :mod:`~publisher.methods.registry`: every method by name;
- :mod:`~publisher.methods.chain`: a chain of methods, then the shuffle.
"""

from importlib import import_module

#: where each public name lives, loaded on first use so that ``publisher --help`` starts without the methods
_WHERE = {
    "AdditiveNoise": "additive_noise", "Method": "base", "MethodResult": "base", "Anonymized": "chain",
    "anonymize": "chain", "anonymizing_label": "chain", "frame_rows": "frames", "frame_to_keys": "frames", "keys_to_frame": "frames",
    "Microaggregation": "microaggregation", "MultiSensitiveGeneralization": "multi_sensitive",
    "RandomAttributeReplacement": "random_replacement", "RandomizedResponse": "randomized_response",
    "RankSwapping": "rank_swapping", "METHODS": "registry", "NUMERIC_METHODS": "registry",
    "known_methods": "registry", "make_method": "registry", "ReverseMapping": "reverse_mapping",
    "SDKAnonymity": "sd_anonymity",
}

__all__ = [
    "METHODS", "NUMERIC_METHODS", "AdditiveNoise", "Anonymized", "Method", "MethodResult", "Microaggregation",
    "MultiSensitiveGeneralization", "RandomAttributeReplacement", "RandomizedResponse", "RankSwapping",
    "ReverseMapping", "SDKAnonymity", "anonymize", "anonymizing_label", "frame_rows", "frame_to_keys", "keys_to_frame",
    "known_methods", "make_method",
]


def __getattr__(name: str):
    """Each public name is loaded from its module on first use."""
    if name not in _WHERE:
        raise AttributeError(f"module 'publisher.methods' has no attribute {name!r}")
    value = getattr(import_module(f"publisher.methods.{_WHERE[name]}"), name)
    globals()[name] = value
    return value
