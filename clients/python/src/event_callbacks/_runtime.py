"""What the generated models and operations share: decoding, encoding and one HTTP call.

Written by hand, once: `npm run clients` regenerates `_generated/` from the OpenAPI document and
leaves this module as it is, since it is the same for every document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

T = TypeVar("T")


class Unset:
    """The value of an optional field or argument that is not sent (unlike None, which is sent as null)."""

    _instance: Unset | None = None

    def __new__(cls) -> Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "UNSET"


UNSET = Unset()


class DecodeError(ValueError):
    """An answer that does not have the shape clients/openapi.json gives it."""


def _object(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise DecodeError(f"{what}: expected an object, got {type(value).__name__}")
    return value


def _required(data: Mapping[str, Any], key: str, what: str) -> Any:
    if key not in data:
        raise DecodeError(f"{what}: {key} is missing")
    return data[key]


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise DecodeError(f"expected a string, got {type(value).__name__}")
    return value


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise DecodeError(f"expected an integer, got {type(value).__name__}")
    return value


def _float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DecodeError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _bool(value: object) -> bool:
    if not isinstance(value, bool):
        raise DecodeError(f"expected a boolean, got {type(value).__name__}")
    return value


def _list(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise DecodeError(f"expected an array, got {type(value).__name__}")
    return value


def _dict(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DecodeError(f"expected an object, got {type(value).__name__}")
    return value


def _enum(value: Any) -> Any:
    return value


def _nullable(value: object, decode: Callable[[Any], T]) -> T | None:
    return None if value is None else decode(value)


def _first_of(value: object, *decoders: Callable[[Any], Any]) -> Any:
    problems = []
    for decode in decoders:
        try:
            return decode(value)
        except DecodeError as problem:
            problems.append(str(problem))
    raise DecodeError("matches none of the alternatives: " + "; ".join(problems))


def _encode(value: object) -> Any:
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if isinstance(value, (list, tuple)):
        return [_encode(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): _encode(item) for key, item in value.items() if not isinstance(item, Unset)}
    return value


def _encode_fields(model: object, fields: Sequence[tuple[str, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, key in fields:
        value = getattr(model, name)
        if not isinstance(value, Unset):
            out[key] = _encode(value)
    return out


class ApiError(Exception):
    """The service refused the call: `status` is the HTTP status, `body` the decoded OpenApiErrorBody."""

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body
        self.code: int = body.code
        super().__init__(f"HTTP {status}, code {body.code}: {body.exception.message}")


class UnexpectedAnswer(Exception):
    """An answer that is neither the operation's success nor an Open API error body."""

    def __init__(self, status: int, text: str) -> None:
        self.status = status
        self.text = text
        super().__init__(f"HTTP {status}: {text[:200]}")


class Operations:
    """One HTTP connection pool to config-api (`base_url` is its origin)."""

    def __init__(self, base_url: str, *, timeout: float = 30.0, http: httpx.Client | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http if http is not None else httpx.Client(timeout=timeout)
        self._owns_http = http is None

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _signed_query(self) -> dict[str, str]:
        """The query parameters every call adds (a subclass signs here)."""
        return {}

    def _call(
        self,
        method: str,
        template: str,
        *,
        path: Sequence[tuple[str, Any]] = (),
        query: Sequence[tuple[str, Any]] = (),
        body: Sequence[tuple[str, Any]] | None = None,
        answer: Callable[[Any], T],
    ) -> T:
        url = template
        for key, value in path:
            url = url.replace("{" + key + "}", quote(str(value), safe=""))
        params: dict[str, str] = {}
        for key, value in query:
            if not isinstance(value, Unset):
                params[key] = str(value).lower() if isinstance(value, bool) else str(value)
        params.update(self._signed_query())
        request: dict[str, Any] = {"params": params}
        if body is not None:
            request["json"] = {key: _encode(value) for key, value in body if not isinstance(value, Unset)}
        response = self._http.request(method, self.base_url + url, **request)
        try:
            decoded = response.json()
        except ValueError:
            raise UnexpectedAnswer(response.status_code, response.text) from None
        if 200 <= response.status_code < 300:
            return answer(decoded)
        from .models import OpenApiErrorBody

        try:
            error = OpenApiErrorBody.from_dict(decoded)
        except DecodeError:
            raise UnexpectedAnswer(response.status_code, response.text) from None
        raise ApiError(response.status_code, error)
