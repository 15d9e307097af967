"""The client: every generated Open API operation, each call signed by signing.py."""

from __future__ import annotations

import httpx

from ._generated import OpenApiOperations
from .signing import signed_query


class EventCallbacks(OpenApiOperations):
    """Signed calls to the Open API of config-api at ``base_url`` (its origin).

    Use it as a context manager, or call ``close()``, to release its connections.
    """

    def __init__(self, base_url: str, email: str, token: str, *, timeout: float = 30.0, http: httpx.Client | None = None) -> None:
        super().__init__(base_url, timeout=timeout, http=http)
        self.email = email
        self._token = token

    def _signed_query(self) -> dict[str, str]:
        return signed_query(self.email, self._token)

    def __repr__(self) -> str:
        return f"EventCallbacks(base_url={self.base_url!r}, email={self.email!r})"
