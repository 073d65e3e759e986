"""Secret detection on the text a reader sees, and the formats issue 11 found missing (R-PRIV-1)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from forget_world import open_world

from memory_core.domain.errors import SecretRejected
from memory_core.domain.secrets import PatternSecretPolicy, WriteMode
from memory_core.services.read.sanitizer import sanitize

# Built from parts so that no complete credential sits in the source.
_B62 = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zC2"  # 33 base-62 characters
HF = "hf_" + _B62 + "Lq"
GITLAB = "glpat-" + "x9Kd2mPq7RtZ4vNb8LwY"
NPM = "npm_" + _B62 + "Lqz"
PYPI = "pypi-AgEIcHlwaS5vcmc" + _B62 + "Jw8kE3tQzX9vN2bH5mP7rT4yU6"
SENDGRID = "SG." + "Ab3dE5gH7jK9mN1pQ2rS4t" + "." + _B62 + "Kd9mPq7RtZ"
TWILIO = "SK" + "0123456789abcdef" * 2
AZURE = "AccountKey=" + "Zm9vYmFyYmF6cXV4" * 5 + "Zm9v=="
TELEGRAM = "123456789:" + "AAH" + _B62[:32]
DISCORD = "https://discord.com/api/webhooks/123456789012345678/" + _B62 + _B62[:30]
OPENAI = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2"
CARD = "4111 1111 1111 1111"

POSITIVES = {
    "huggingface_token": f"my token is {HF} keep it",
    "gitlab_token": f"export GITLAB_TOKEN={GITLAB}",
    "npm_token": f"//registry.npmjs.org/:_authToken {NPM}",
    "pypi_token": f"upload with {PYPI}",
    "sendgrid_key": f"mail key {SENDGRID}",
    "twilio_key": f"twilio {TWILIO} in prod",
    "azure_storage_key": f"DefaultEndpointsProtocol=https;AccountName=x;{AZURE};",
    "telegram_bot_token": f"bot {TELEGRAM} talks",
    "discord_webhook": f"post to {DISCORD} please",
}

PROSE = [
    "I use hf_hub_download to fetch models from the hub.",
    "Set npm_config_cache to a writable folder.",
    "pypi-publish is the name of our GitHub action.",
    "SG. Smith reviewed the plan; SG-1 is a TV show.",
    "SKU 12345 is sold out; SK Telecom is a company.",
    "Our AccountKey rotation policy is quarterly.",
    "The meeting is at 10:30 and the train at 12:45:00.",
    "discord.com is where the community chats about webhooks.",
    "GitLab personal access tokens start with a prefix; glpat is one.",
]

SPLITTERS = ["\u200b", "\u00ad", "\u2060", "\ufeff", "\u200d"]


@pytest.mark.parametrize(("kind", "text"), sorted(POSITIVES.items()))
def test_new_credential_formats_are_found(kind: str, text: str) -> None:
    """R-PRIV-1: each format gitleaks/detect-secrets know is found and redacted."""
    policy = PatternSecretPolicy(mode=WriteMode.REDACT)
    assert kind in {finding.kind for finding in policy.find(text)}
    redacted = policy.redact(text)
    assert f"[REDACTED:{kind}]" in redacted


@pytest.mark.parametrize("text", PROSE)
def test_prose_about_those_formats_is_not_a_secret(text: str) -> None:
    """R-PRIV-1: prose naming the prefixes stays untouched."""
    assert PatternSecretPolicy().find(text) == []


def _split(secret: str, splitter: str) -> str:
    # An invisible character every four characters, as a paste from a chat client may have.
    return splitter.join(secret[i : i + 4] for i in range(0, len(secret), 4))


@pytest.mark.parametrize("splitter", SPLITTERS)
@pytest.mark.parametrize("secret", [OPENAI, CARD, HF, TELEGRAM])
def test_a_secret_split_by_invisible_characters_is_still_found(secret: str, splitter: str) -> None:
    """R-PRIV-1: detection runs on the folded text, so a key or card number broken by a
    zero-width space, soft hyphen or word joiner is found; redaction covers the original
    characters, and what the sanitiser makes of the result holds no secret."""
    text = f"note: {_split(secret, splitter)} end"
    assert PatternSecretPolicy().find(text)
    redacted = PatternSecretPolicy(mode=WriteMode.REDACT).redact(text)
    assert redacted.startswith("note: [REDACTED:") and redacted.endswith("] end")
    assert secret not in sanitize(redacted)
    assert PatternSecretPolicy().find(sanitize(redacted)) == []


def test_fullwidth_digits_of_a_card_number_are_found() -> None:
    """R-PRIV-1: NFKC folds fullwidth digits to the card number a model reads."""
    fullwidth = CARD.translate({ord(d): chr(0xFF10 + int(d)) for d in "0123456789"})
    assert [f.kind for f in PatternSecretPolicy().find(fullwidth)] == ["card_number"]


@pytest.mark.parametrize("splitter", SPLITTERS)
def test_remember_refuses_a_split_key(tmp_path: Path, splitter: str) -> None:
    """R-PRIV-1: the write path refuses a split key instead of storing it for the prompt."""

    async def go() -> None:
        memory = open_world(tmp_path / "data")
        try:
            with pytest.raises(SecretRejected):
                await memory.remember("agent-a", f"my key is {_split(OPENAI, splitter)}")
            assert list(memory.list_claims("agent-a")) == []
        finally:
            await memory.aclose()

    asyncio.run(go())
