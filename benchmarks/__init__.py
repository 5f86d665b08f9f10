"""Benchmarks of SPEC section 11: ``python -m benchmarks`` prints the table."""
