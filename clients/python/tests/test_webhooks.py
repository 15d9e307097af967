import base64
import os
import time

import pytest

from event_callbacks import WebhookVerificationError, sign_webhook, verify_webhook, webhook_signature

from .conftest import VECTORS

REFERENCE = VECTORS["webhooks"][0]


def headers_of(vector: dict[str, object]) -> dict[str, str]:
    return {"webhook-id": str(vector["id"]), "webhook-timestamp": str(vector["timestamp"]), "webhook-signature": str(vector["signature"])}


@pytest.mark.parametrize("vector", VECTORS["webhooks"], ids=lambda vector: vector["id"])
def test_golden_vectors(vector: dict[str, object]) -> None:
    secret, webhook_id, timestamp, body = str(vector["secret"]), str(vector["id"]), int(str(vector["timestamp"])), str(vector["body"])
    assert webhook_signature(secret, webhook_id, timestamp, body) == vector["signature"]
    verify_webhook(secret, headers_of(vector), body, now=timestamp)
    verify_webhook(secret, headers_of(vector), body.encode(), now=timestamp + 299)


def test_either_secret_of_a_rotation_verifies() -> None:
    other = "whsec_" + base64.b64encode(os.urandom(32)).decode()
    body = b'{"action":"Customer_create","message":{"id":7}}'
    now = int(time.time())
    headers = sign_webhook(REFERENCE["secret"], "evt_rot", now, body)
    headers["webhook-signature"] = webhook_signature(other, "evt_rot", now, body) + " " + headers["webhook-signature"]
    verify_webhook(REFERENCE["secret"], headers, body)
    verify_webhook(other, headers, body)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"body": REFERENCE["body"] + " "}, "no webhook-signature matches"),
        ({"secret": "whsec_" + base64.b64encode(b"another secret, 24 bytes!").decode()}, "no webhook-signature matches"),
        ({"now": REFERENCE["timestamp"] + 301}, "too old"),
        ({"now": REFERENCE["timestamp"] - 301}, "too far in the future"),
        ({"headers": {"webhook-id": REFERENCE["id"], "webhook-timestamp": str(REFERENCE["timestamp"])}}, "missing"),
        ({"headers": {**headers_of(REFERENCE), "webhook-signature": "v2," + REFERENCE["signature"][3:]}}, "no webhook-signature matches"),
        ({"headers": {**headers_of(REFERENCE), "webhook-timestamp": "soon"}}, "not Unix seconds"),
    ],
)
def test_refuses(change: dict[str, object], message: str) -> None:
    secret = str(change.get("secret", REFERENCE["secret"]))
    headers = change.get("headers", headers_of(REFERENCE))
    body = str(change.get("body", REFERENCE["body"]))
    now = float(str(change.get("now", REFERENCE["timestamp"])))
    with pytest.raises(WebhookVerificationError, match=message):
        verify_webhook(secret, headers, body, now=now)  # type: ignore[arg-type]


def test_reads_header_names_in_any_case() -> None:
    headers = {"Webhook-Id": REFERENCE["id"], "WEBHOOK-TIMESTAMP": str(REFERENCE["timestamp"]), "webhook-signature": "v1,AAAA " + REFERENCE["signature"]}
    verify_webhook(REFERENCE["secret"], headers, REFERENCE["body"], now=REFERENCE["timestamp"])
