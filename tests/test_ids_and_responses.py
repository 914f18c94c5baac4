"""Ids and responses, steps 2 and 3: what counts as a response, and which id an error carries."""
import pytest

from helpers import rpc

# An id must be a string or an integer. The answer to a message with any other id
# cannot name it (the client could not match it), so its error carries null.
INVALID_IDS = [True, False, 1.5, {"a": 1}, [1]]
# A response names the request it answers; without an id it answers nothing.
RESPONSES_WITHOUT_ID = [
    {"jsonrpc": "2.0", "result": {}},
    {"jsonrpc": "2.0", "error": {"code": -32603, "message": "oops"}},
]


@pytest.mark.parametrize("message", RESPONSES_WITHOUT_ID)
def test_a_response_without_an_id_is_refused_not_accepted(server, message):
    session_id = server.open_session()
    reply = server.send(session_id, message)
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32600


@pytest.mark.parametrize("bad_id", INVALID_IDS)
def test_the_error_for_an_invalid_id_carries_null(server, bad_id):
    session_id = server.open_session()
    reply = server.send(session_id, {"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
    assert reply.status == 400
    assert reply.json()["id"] is None
    assert reply.json()["error"]["code"] == -32600


@pytest.mark.parametrize("bad_id", INVALID_IDS)
def test_the_error_for_an_invalid_id_carries_null_without_a_session_too(server, bad_id):
    # Refused before any session is looked up: the id is still not echoed.
    reply = server.post({"jsonrpc": "2.0", "id": bad_id, "method": "initialize"})
    assert reply.status == 400
    assert reply.json()["id"] is None


@pytest.mark.parametrize("message", RESPONSES_WITHOUT_ID)
def test_stdio_a_response_without_an_id_is_refused(stdio, message):
    assert stdio.ask(message)["error"]["code"] == -32600


@pytest.mark.parametrize("bad_id", INVALID_IDS)
def test_stdio_the_error_for_an_invalid_id_carries_null(stdio, bad_id):
    answer = stdio.ask({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600


def test_stdio_a_valid_id_is_echoed_exactly(stdio):
    for request_id in (0, -1, "", "x y"):
        assert stdio.ask(rpc("ping", id=request_id))["id"] == request_id
