"""Every Open API operation through EventCallbacks, against the service test/client-python.e2e-spec.ts starts."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from event_callbacks import ApiError, EventCallbacks
from event_callbacks.models import DestinationHeaderAuth


def ingest(service: dict[str, str], count: int) -> list[str]:
    """Events accepted by the real ingest for the test account, in this order."""
    ids = []
    for index in range(count):
        message = {**json.loads(service["TEST_SAMPLE_MESSAGE"]), "id": index + 1}
        body = json.dumps({"account_id": int(service["TEST_ACCOUNT_ID"]), "action": "Customer_update", "message": message})
        request = urllib.request.Request(
            service["TEST_INGEST_URL"] + "/v1/events",
            data=body.encode(),
            headers={"authorization": "Bearer " + service["TEST_INGEST_TOKEN"], "content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 202
            ids.append(json.loads(response.read())["event_id"])
    return ids


def test_settings_operations_answer_typed_values(client: EventCallbacks, service: dict[str, str]) -> None:
    receiver = service["TEST_RECEIVER_URL"]
    assert client.set_url(push_url=receiver).push_url == receiver
    assert client.set_push_content_type(push_content_type="JSON").webhook_push_type == "JSON"
    changed = client.set_permissions(permissions={"customer_create": True, "customer_update": True})
    assert changed.code == 1000 and changed.permissions.customer_update is True and changed.permissions.customer_destroy is False
    options = client.set_delivery_options(ordering="subject", max_per_second=None)
    assert (options.ordering, options.max_per_second) == ("subject", None)
    settings = client.push_settings()
    assert (settings.push_url, settings.push_content_type, settings.ordering) == (receiver, "JSON", "subject")
    link = client.portal_link()
    assert "/portal#" in link.url and link.expires_at


def test_destinations(client: EventCallbacks, service: dict[str, str]) -> None:
    auth = DestinationHeaderAuth(type="header", name="X-Api-Key", value="k-1234")
    created = client.create_destination(type="webhook", target=service["TEST_RECEIVER_URL"], actions=["Customer_update"], auth=auth).destination
    assert created.signing_secret and created.signing_secret.startswith("whsec_")
    assert created.auth is not None and created.auth.type == "header"
    updated = client.update_destination(created.id, max_per_second=5, filter={"name": "Ada"}).destination
    assert (updated.max_per_second, updated.filter) == (5, {"name": "Ada"})
    assert client.pause_destination(created.id).destination.paused is True
    assert client.resume_destination(created.id).destination.paused is False
    assert client.pause_destination("primary").destination.paused is True
    assert client.resume_destination("primary").destination.paused is False
    assert [item.id for item in client.list_destinations().items] == ["primary", created.id]
    assert client.delete_destination(created.id).code == 1000
    with pytest.raises(ApiError) as refused:
        client.delete_destination(created.id)
    assert (refused.value.status, refused.value.code) == (404, 2000)


def test_the_feed_in_order_with_a_test_event(client: EventCallbacks, service: dict[str, str]) -> None:
    client.set_permissions(permissions={"customer_update": True})
    start = client.list_events(limit=500)
    cursor = start.next_cursor
    while start.items:
        start = client.list_events(after=cursor, limit=500)
        cursor = start.next_cursor
    ids = ingest(service, 3)
    test_event = client.send_test_event(action="Customer_create").event_id
    assert test_event.startswith("test_")
    expected = [*ids, test_event]
    seen: list[str] = []
    # The feed shows an event once every write transaction begun before it has ended, anywhere in the
    # cluster: under parallel test files that can take seconds, and an earlier test's event held back
    # then may come first.
    deadline = time.monotonic() + 60
    while len(seen) < len(expected) and time.monotonic() < deadline:
        page = client.list_events(after=cursor, limit=2)
        seen += [item.event_id for item in page.items if item.event_id in expected]
        cursor = page.next_cursor
        if not page.items:
            time.sleep(0.2)
    assert seen == expected
    assert client.list_events(after=cursor).items == []


def test_refusals_raise_api_error_with_the_decoded_body(client: EventCallbacks, service: dict[str, str]) -> None:
    with pytest.raises(ApiError) as wrong:
        client.set_push_content_type(push_content_type="text/plain")  # type: ignore[arg-type]
    assert (wrong.value.status, wrong.value.code, wrong.value.body.message) == (400, 2000, "Unknown error")
    with pytest.raises(ApiError) as limit:
        client.list_events(limit=501)
    assert "limit" in limit.value.body.exception.message
    with EventCallbacks(base_url=service["EVENT_CALLBACKS_URL"], email=service["EVENT_CALLBACKS_EMAIL"], token="not-the-token") as stranger:
        with pytest.raises(ApiError) as refused:
            stranger.push_settings()
    assert (refused.value.status, refused.value.code) == (401, 2059)


def test_each_call_has_a_nonce_of_its_own(client: EventCallbacks) -> None:
    for _ in range(5):
        assert client.push_settings().code == 1000
