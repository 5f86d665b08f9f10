"""The methods' names alone: what a command's ``--help`` lists, without loading a method.

:mod:`publisher.methods.registry` holds the classes under these names, in
this order; a test keeps the two the same.
"""

__all__ = ["METHOD_NAMES", "NUMERIC_METHODS"]

#: the rank-based methods of paper 003's setting, then the categorical ones of papers 000, 001, 002 and 004, then
#: m-invariance (Xiao and Tao 2007)
METHOD_NAMES = ("additive_noise", "rank_swapping", "microaggregation", "reverse_mapping", "randomized_response",
                "random_attribute_replacement", "sd_k_anonymity", "multi_sensitive_generalization", "m_invariant")
#: the methods of paper 003's setting, on numeric (or ordered) attributes
NUMERIC_METHODS = METHOD_NAMES[:4]
