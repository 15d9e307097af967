"""Client for the event-callbacks Open API: ``EventCallbacks`` for signed calls, ``verify_webhook`` for receivers."""

from ._generated import UNSET, ApiError, DecodeError, UnexpectedAnswer, Unset, models
from .client import EventCallbacks
from .signing import open_api_sign, signed_query
from .webhooks import WebhookVerificationError, sign_webhook, verify_webhook, webhook_signature

__all__ = [
    "UNSET",
    "ApiError",
    "DecodeError",
    "EventCallbacks",
    "UnexpectedAnswer",
    "Unset",
    "WebhookVerificationError",
    "models",
    "open_api_sign",
    "sign_webhook",
    "signed_query",
    "verify_webhook",
    "webhook_signature",
]
