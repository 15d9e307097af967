"""The generated models decode what the service answers and encode only what is set."""

import pytest

from event_callbacks import UNSET, DecodeError
from event_callbacks.models import DestinationAnswer, DestinationHeaderAuth, DestinationModel, FeedAnswer, PermissionsChange

DESTINATION = {
    "id": "dst_5f0c1e0a9b7d4c3e8a2b6d1f",
    "type": "webhook",
    "target": "https://receiver.example.com/hook",
    "actions": None,
    "filter": {"organization.id": {"$in": [12, 13]}},
    "content_type": "JSON",
    "format": "udesk",
    "auth": {"type": "header"},
    "ordering": "none",
    "max_per_second": None,
    "paused": False,
    "retry": {"schedule": ["1m", "5m"], "stop_on": [404], "disable_on": [410]},
    "expire_after": None,
    "state": {"breaker": "closed", "disabled_at": None, "held": 0},
}


def test_decodes_nested_nullable_and_optional_fields() -> None:
    answer = DestinationAnswer.from_dict({"code": 1000, "message": "OK", "destination": DESTINATION})
    destination = answer.destination
    assert destination.auth is not None and destination.auth.type == "header"
    assert destination.actions is None and destination.max_per_second is None
    assert destination.state.breaker == "closed" and destination.state.disabled_at is None and destination.state.held == 0
    assert destination.retry.schedule == ["1m", "5m"] and destination.retry.stop_on == [404] and destination.expire_after is None
    assert destination.filter == {"organization.id": {"$in": [12, 13]}}
    assert destination.signing_secret is UNSET


def test_ignores_fields_a_newer_service_adds() -> None:
    destination = DestinationModel.from_dict({**DESTINATION, "grace_period": "1d", "retry": {**DESTINATION["retry"], "jitter": True}})
    assert destination.id == DESTINATION["id"]


def test_refuses_an_answer_of_another_shape() -> None:
    with pytest.raises(DecodeError, match="next_cursor is missing"):
        FeedAnswer.from_dict({"code": 1000, "message": "OK", "items": []})
    with pytest.raises(DecodeError, match="expected a boolean"):
        DestinationModel.from_dict({**DESTINATION, "paused": "no"})


def test_encodes_only_the_fields_that_are_set() -> None:
    assert PermissionsChange(customer_create=True, organization_update=False).to_dict() == {"customer_create": True, "organization_update": False}
    assert DestinationHeaderAuth(type="header", name="X-Api-Key", value="k").to_dict() == {"type": "header", "name": "X-Api-Key", "value": "k"}
    assert DestinationModel.from_dict(DESTINATION).to_dict() == DESTINATION
