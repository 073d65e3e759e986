"""The API key: held privately, shown nowhere, sent only as a request header (R-PROV-5)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from memory_core.domain.errors import ValidationError

__all__ = ["ApiKey", "resolve_api_key"]


class ApiKey:
    """A credential whose repr, str and equality never expose the value.

    Only `reveal()` returns it, and only the request builder calls that.
    """

    __slots__ = ("__value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str) or not value:
            raise ValidationError("api_key", "must be a non-empty string")
        if any(char.isspace() for char in value) or not value.isprintable():
            # A header value with a newline would inject headers; the value itself stays unsaid.
            raise ValidationError("api_key", "must be one line of printable characters")
        self.__value = value

    def reveal(self) -> str:
        return self.__value

    def __repr__(self) -> str:
        return "ApiKey(<redacted>)"

    __str__ = __repr__

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("an ApiKey cannot be pickled")


def resolve_api_key(
    api_key: str | None = None,
    api_key_env: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> ApiKey | None:
    """The key from `api_key`, else from the environment variable named `api_key_env`.

    Errors name the option and the variable, never a value.
    """
    if api_key is not None and api_key_env is not None:
        raise ValidationError("api_key", "give api_key or api_key_env, not both")
    if api_key is not None:
        return ApiKey(api_key)
    if api_key_env is None:
        return None
    if not api_key_env or "=" in api_key_env:
        raise ValidationError("api_key_env", "must be the name of an environment variable")
    value = (os.environ if environ is None else environ).get(api_key_env)
    if not value:
        raise ValidationError("api_key_env", f"environment variable {api_key_env!r} is not set")
    try:
        return ApiKey(value)
    except ValidationError as exc:
        raise ValidationError("api_key_env", f"{api_key_env!r}: {exc.reason}") from None
