"""What the tests share: the golden vectors, and the running service test/client-python.e2e-spec.ts starts."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from event_callbacks import EventCallbacks

REPOSITORY = Path(__file__).resolve().parents[3]
VECTORS: dict[str, Any] = json.loads((REPOSITORY / "clients" / "signing-vectors.json").read_text(encoding="utf-8"))

# Set by test/client-python.e2e-spec.ts, which starts config-api and ingest with a fresh account.
SERVICE = (
    "EVENT_CALLBACKS_URL",
    "EVENT_CALLBACKS_EMAIL",
    "EVENT_CALLBACKS_TOKEN",
    "EVENT_CALLBACKS_SECRET",
    "TEST_INGEST_URL",
    "TEST_INGEST_TOKEN",
    "TEST_ACCOUNT_ID",
    "TEST_RECEIVER_URL",
    "TEST_SAMPLE_MESSAGE",
)


@pytest.fixture(scope="session")
def service() -> dict[str, str]:
    missing = [name for name in SERVICE if not os.environ.get(name)]
    if missing:
        pytest.skip(f"no running service ({', '.join(missing)} unset): npx jest test/client-python.e2e-spec.ts starts one")
    return {name: os.environ[name] for name in SERVICE}


@pytest.fixture
def client(service: dict[str, str]) -> Iterator[EventCallbacks]:
    with EventCallbacks(base_url=service["EVENT_CALLBACKS_URL"], email=service["EVENT_CALLBACKS_EMAIL"], token=service["EVENT_CALLBACKS_TOKEN"]) as opened:
        yield opened
