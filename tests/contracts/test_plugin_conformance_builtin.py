"""PluginConformance run against the first-party plugins, which register like any other.

R-ARCH-3: the built-in entry points pass the same conformance suite a third-party plugin
runs. The HTTP providers are left out here: their smoke check needs a server, and their
contract suites run over a mock transport and a loopback server elsewhere.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from memory_contracts.fake_providers import ScriptedTextProvider
from memory_contracts.plugin import PluginConformance


class TestBuiltinClocksConformance(PluginConformance):
    entry_point = "builtin-clocks"
    options: ClassVar = {"system": {"timezone": "Europe/Lisbon"}}


class TestBuiltinSecretPoliciesConformance(PluginConformance):
    entry_point = "builtin-secret-policies"


class TestBuiltinClaimStoresConformance(PluginConformance):
    entry_point = "builtin-claim-stores"


class TestBuiltinCursorStoresConformance(PluginConformance):
    entry_point = "builtin-cursor-stores"


class TestBuiltinVectorStoresConformance(PluginConformance):
    entry_point = "builtin-vector-stores"


class TestBuiltinTapesConformance(PluginConformance):
    entry_point = "builtin-tapes"


class TestBuiltinExtractorsConformance(PluginConformance):
    entry_point = "builtin-extractors"
    options: ClassVar = {"llm": {"text_provider": "scripted"}}

    @pytest.fixture
    def conformance_text_provider(self) -> ScriptedTextProvider:
        return ScriptedTextProvider(default='{"claims": []}')
