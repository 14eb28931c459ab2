"""Benchmarks (not tests): `make bench` or `python -m bench [NAME...]`."""
