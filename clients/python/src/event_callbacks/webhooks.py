"""Standard Webhooks verification, written by hand.

``webhook-signature`` is ``v1,<base64 HMAC-SHA256>`` over ``<webhook-id>.<webhook-timestamp>.<body>``, keyed by
the base64-decoded part of the secret after ``whsec_``; several signatures may be space separated (during a
secret rotation).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import time
from collections.abc import Mapping

SECRET_PREFIX = "whsec_"
DEFAULT_TOLERANCE_SECONDS = 300
"""Five minutes either way, as Standard Webhooks recommends."""


class WebhookVerificationError(Exception):
    """A callback whose headers are missing, whose timestamp is stale, or whose signature does not match."""


def _key(secret: str) -> bytes:
    encoded = secret.removeprefix(SECRET_PREFIX)
    key = base64.b64decode(encoded)
    if not key:
        raise WebhookVerificationError("the signing secret is empty")
    return key


def _body_bytes(body: str | bytes) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else body


def _mac(secret: str, webhook_id: str, timestamp: str, body: str | bytes) -> bytes:
    return hmac.new(_key(secret), f"{webhook_id}.{timestamp}.".encode() + _body_bytes(body), hashlib.sha256).digest()


def webhook_signature(secret: str, webhook_id: str, timestamp: int | str, body: str | bytes) -> str:
    """One ``v1,<base64>`` signature."""
    return "v1," + base64.b64encode(_mac(secret, webhook_id, str(timestamp), body)).decode("ascii")


def sign_webhook(secret: str, webhook_id: str, timestamp: int, body: str | bytes) -> dict[str, str]:
    """The three headers a callback carries for exactly these body bytes."""
    return {"webhook-id": webhook_id, "webhook-timestamp": str(timestamp), "webhook-signature": webhook_signature(secret, webhook_id, timestamp, body)}


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def verify_webhook(
    secret: str,
    headers: Mapping[str, str],
    body: str | bytes,
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> None:
    """Check a callback; raise WebhookVerificationError unless it is signed with ``secret`` and recent.

    ``body`` must be the raw bytes received (not re-serialized JSON). Comparisons are constant time.
    """
    webhook_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not webhook_id or not timestamp or not signatures:
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature")
    if not re.fullmatch(r"[0-9]{1,15}", timestamp):
        raise WebhookVerificationError("webhook-timestamp is not Unix seconds")
    current = int(time.time() if now is None else now)
    if abs(current - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError("webhook-timestamp is too old or too far in the future")
    expected = _mac(secret, webhook_id, timestamp, body)
    matched = False
    for candidate in signatures.split(" "):
        version, _, encoded = candidate.partition(",")
        if version != "v1" or not encoded:
            continue
        try:
            presented = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            continue
        # Every candidate is compared in full, so the time taken does not tell which one matched.
        if hmac.compare_digest(presented, expected):
            matched = True
    if not matched:
        raise WebhookVerificationError("no webhook-signature matches the secret")
