import re
import time

import pytest

from event_callbacks import open_api_sign, signed_query

from .conftest import VECTORS


@pytest.mark.parametrize("vector", VECTORS["open_api"], ids=lambda vector: vector["email"])
def test_golden_vectors(vector: dict[str, object]) -> None:
    assert open_api_sign(str(vector["email"]), str(vector["token"]), int(str(vector["timestamp"])), str(vector["nonce"])) == vector["sign"]


def test_signed_query_has_the_five_parameters_a_new_nonce_and_now() -> None:
    first = signed_query("a@example.com", "t")
    second = signed_query("a@example.com", "t")
    assert sorted(first) == ["email", "nonce", "sign", "sign_version", "timestamp"]
    assert first["nonce"] != second["nonce"]
    assert abs(int(first["timestamp"]) - int(time.time())) <= 1
    assert first["sign_version"] == "v2"
    assert re.fullmatch("[0-9a-f]{64}", first["sign"])
    assert first["sign"] == open_api_sign("a@example.com", "t", first["timestamp"], first["nonce"])


def test_signed_query_takes_a_given_timestamp_and_nonce() -> None:
    vector = VECTORS["open_api"][0]
    query = signed_query(vector["email"], vector["token"], timestamp=vector["timestamp"], nonce=vector["nonce"])
    assert query == {"email": vector["email"], "timestamp": "1700000000", "nonce": "n-0001", "sign_version": "v2", "sign": vector["sign"]}
