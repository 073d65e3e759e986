"""Contract-test suites for every port, deterministic fakes, and an opt-in pytest plugin.

Plugin authors subclass a `*Contract` class and provide a factory fixture; the suite checks
the semantics the port's docstrings promise. Sees `memory_core` only, never an adapter.
"""
