"""Error translation, Retry-After and the API key holder (R-PROV-5)."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from memory_adapters.httpx_providers import ApiKey, resolve_api_key
from memory_adapters.httpx_providers.errors import retry_after_seconds, safe_text
from memory_core.domain.errors import ValidationError

SECRET = "s3cr3t-value-0042"


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("3", 3.0), ("0.5", 0.5), ("-4", 0.0), ("soon", None), ("nan", None)],
)
def test_retry_after_seconds_reads_delta_seconds(header, seconds) -> None:
    assert retry_after_seconds({"retry-after": header}) == seconds


def test_retry_after_reads_an_http_date() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    header = format_datetime(datetime(2026, 1, 1, 12, 0, 30, tzinfo=UTC), usegmt=True)
    assert retry_after_seconds({"retry-after": header}, now=now.timestamp()) == 30.0


def test_no_retry_after_header_is_none() -> None:
    assert retry_after_seconds({}) is None


def test_safe_text_scrubs_known_secrets_urls_and_bearer_tokens() -> None:
    """R-PROV-5: the key by value, plus whatever the shared redaction recognises."""
    text = f"failed for {SECRET} at https://host/v1?api_key=abc with Bearer tok-123456789"
    cleaned = safe_text(text, [SECRET])
    assert SECRET not in cleaned and "https://" not in cleaned and "tok-123456789" not in cleaned
    assert cleaned.startswith("failed for [REDACTED]")


def test_safe_text_is_bounded() -> None:
    assert len(safe_text("x" * 5_000)) <= 200


def test_an_api_key_never_shows_itself() -> None:
    """R-PROV-5: repr, str, f-strings and pickling never reveal the key."""
    key = ApiKey(SECRET)
    assert key.reveal() == SECRET
    for text in (repr(key), str(key), f"{key}", repr([key])):
        assert SECRET not in text
    with pytest.raises(TypeError):
        pickle.dumps(key)


def test_the_key_comes_from_the_named_environment_variable() -> None:
    key = resolve_api_key(api_key_env="MY_KEY", environ={"MY_KEY": SECRET})
    assert key is not None and key.reveal() == SECRET
    assert resolve_api_key() is None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"api_key_env": "MISSING"}, "api_key_env"),
        ({"api_key_env": ""}, "api_key_env"),
        ({"api_key": SECRET, "api_key_env": "MY_KEY"}, "api_key"),
        ({"api_key_env": "BAD"}, "api_key_env"),
    ],
)
def test_key_resolution_errors_name_the_option_but_never_the_value(kwargs, field) -> None:
    environ = {"MY_KEY": SECRET, "BAD": f"{SECRET}\n"}
    with pytest.raises(ValidationError) as caught:
        resolve_api_key(**kwargs, environ=environ)
    assert caught.value.field == field
    assert SECRET not in str(caught.value)
