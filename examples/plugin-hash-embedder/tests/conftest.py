"""Opt in to the contract suites' pytest plugin: capabilities and strict expected failures."""

pytest_plugins = ["memory_contracts.pytest_plugin"]
