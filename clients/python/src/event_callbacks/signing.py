"""Open API v2 request signing (CONTRACT §2), written by hand.

Every call carries ``email``, ``timestamp`` (Unix seconds), ``nonce`` (new for each call),
``sign_version=v2`` and ``sign``, the lowercase hex SHA-256 of ``email&open_api_token&timestamp&nonce&v2``.
The query string and the body are not signed.
"""

from __future__ import annotations

import hashlib
import time
import uuid

SIGN_VERSION = "v2"


def open_api_sign(email: str, token: str, timestamp: int | str, nonce: str) -> str:
    """``sign`` for these values."""
    text = "&".join([email, token, str(timestamp), nonce, SIGN_VERSION])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def signed_query(email: str, token: str, *, timestamp: int | None = None, nonce: str | None = None) -> dict[str, str]:
    """The five signed query parameters of one call: now and a fresh nonce unless given."""
    at = str(int(time.time()) if timestamp is None else timestamp)
    once = nonce if nonce is not None else str(uuid.uuid4())
    return {"email": email, "timestamp": at, "nonce": once, "sign_version": SIGN_VERSION, "sign": open_api_sign(email, token, at, once)}
