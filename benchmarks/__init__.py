"""Benchmarks (not tests): `python -m benchmarks.<name>`; each prints a table and can write JSON."""
