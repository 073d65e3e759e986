"""The first-party extractor registrations: names, options, and the llm provider hand-over.

Plugins are handed to the loader directly (`entry_points=False`), so the tests never depend
on what happens to be installed (R-ARCH-3, R-ARCH-5).
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from extractor_support import MakeRequest, RunExtractor

import memory_plugins.builtin.extractors as builtin_extractors
from memory_adapters.extractors import LLMExtractor, RulesExtractor, VerbatimExtractor
from memory_contracts.fake_providers import ScriptedTextProvider
from memory_core.domain.secrets import PatternSecretPolicy, WriteMode
from memory_core.settings import MemorySettings
from memory_plugins import FactoryContext, PluginRegistry, load_plugins
from memory_plugins.errors import PluginLoadError


@attrs.frozen(kw_only=True)
class ProviderContext(FactoryContext):
    """The context as the composition root builds it for the llm extractor."""

    text_provider: object = None


@pytest.fixture
def registry() -> PluginRegistry:
    return load_plugins(strict=True, entry_points=False, plugins=[builtin_extractors]).registry


def test_three_extractors_are_registered(registry: PluginRegistry) -> None:
    assert registry.names("extractor") == ("llm", "rules", "verbatim")


def test_rules_and_verbatim_take_the_shared_policy_and_claim_limit(
    registry: PluginRegistry, tmp_path: Path, make_request: MakeRequest, run: RunExtractor
) -> None:
    """R-PRIV-1: the one secret policy of the composition root reaches the extractors, and
    the claim length limit comes from the settings."""
    context = FactoryContext(
        data_dir=tmp_path,
        secret_policy=PatternSecretPolicy(mode=WriteMode.REDACT),
        settings=MemorySettings(extracted_claim_max_code_points=500),
    )
    rules = registry.create_extractor("rules", context)
    verbatim = registry.create_extractor("verbatim", context)
    assert isinstance(rules, RulesExtractor) and isinstance(verbatim, VerbatimExtractor)

    token = "ghp_" + "a1B2c3D4e5" * 4
    (claim,) = run(rules, make_request([("user", f"I prefer the token {token}.")])).candidates
    assert "[REDACTED:github_token]" in claim.content  # redacted, not rejected

    long_turn = "This sentence is exactly forty-four characters. " * 25
    pieces = run(verbatim, make_request([("user", long_turn)])).candidates
    assert len(pieces) == 3 and all(len(piece.content) <= 500 for piece in pieces)


def test_unknown_option_is_reported_with_its_key(registry: PluginRegistry, tmp_path: Path) -> None:
    context = FactoryContext(data_dir=tmp_path, options={"verbose": True})
    with pytest.raises(PluginLoadError, match=r"plugins\.extractor\.options\.verbose"):
        registry.create_extractor("rules", context)


def test_llm_without_a_text_provider_names_the_missing_option(
    registry: PluginRegistry, tmp_path: Path
) -> None:
    with pytest.raises(PluginLoadError, match=r"plugins\.extractor\.options\.text_provider"):
        registry.create_extractor("llm", FactoryContext(data_dir=tmp_path))


def test_llm_with_a_named_provider_not_handed_over_says_so(
    registry: PluginRegistry, tmp_path: Path
) -> None:
    context = FactoryContext(data_dir=tmp_path, options={"text_provider": "openai-compatible"})
    with pytest.raises(PluginLoadError, match=r"FactoryContext\.text_provider"):
        registry.create_extractor("llm", context)


def test_llm_uses_the_provider_the_composition_root_hands_over(
    registry: PluginRegistry, tmp_path: Path
) -> None:
    provider = ScriptedTextProvider(provider_id="scripted-x")
    context = ProviderContext(
        data_dir=tmp_path,
        options={"text_provider": "scripted", "temperature": 0.0, "max_tokens": 512},
        text_provider=provider,
    )
    extractor = registry.create_extractor("llm", context)
    assert isinstance(extractor, LLMExtractor)
    assert "scripted-x" in repr(extractor)


@pytest.mark.parametrize(
    ("options", "key"),
    [({"temperature": 3.0}, "temperature"), ({"max_tokens": 0}, "max_tokens")],
)
def test_llm_options_are_validated(
    registry: PluginRegistry, tmp_path: Path, options: dict[str, object], key: str
) -> None:
    context = ProviderContext(
        data_dir=tmp_path, options=options, text_provider=ScriptedTextProvider()
    )
    with pytest.raises(PluginLoadError, match=rf"plugins\.extractor\.options\.{key}"):
        registry.create_extractor("llm", context)


def test_entry_point_is_declared_in_pyproject() -> None:
    """R-ARCH-3: first-party extractors load through the same entry-point group."""
    import tomllib

    pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
    entry_points = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["entry-points"]
    assert entry_points["agent_memory"]["builtin-extractors"] == "memory_plugins.builtin.extractors"
