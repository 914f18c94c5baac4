"""The index as clients use it: what a tool announces before it runs, and what the log
keeps of a client's messages."""
import io
import logging

import pytest

from helpers import distinct_copies, step_modules
from manifest import find_step


@pytest.mark.parametrize("step", distinct_copies("tools.py", since=7))
def test_reindex_is_announced_as_work_a_client_should_ask_for(step):
    """A client may run a read-only, idempotent tool without asking the user; a reindex
    embeds every note again, minutes of work on a large vault, and writes a new index."""
    with step_modules(find_step(step).path):
        from tools import TOOLS
    hints = TOOLS["reindex"].annotations
    assert hints["readOnlyHint"] is False and hints["idempotentHint"] is False
    assert hints["destructiveHint"] is False  # no note is changed
    looks = [name for name, tool in TOOLS.items() if name not in ("reindex", "create_note")]
    assert looks and all(TOOLS[name].annotations["readOnlyHint"] is True for name in looks)


class FailingCore:
    def listen(self, message, send):
        raise RuntimeError("a bug")


@pytest.mark.parametrize("step", distinct_copies("stdio_transport.py", since=9))
def test_a_subscription_that_fails_is_logged_without_the_message(step, caplog):
    """The log never holds a client's message whole: it may carry note paths and
    anything else the client sent."""
    with step_modules(find_step(step).path):
        from stdio_transport import Lines, listen
    message = {"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
               "params": {"notifications": {"resourceSubscriptions": ["vault:///Private/Diary.md"]}}}
    with caplog.at_level(logging.ERROR):
        answer = listen(FailingCore(), message, Lines(io.StringIO()), {})
    assert answer["error"]["code"] == -32603 and answer["id"] == 7
    assert caplog.records, "the failure is logged"
    logged = "\n".join(record.getMessage() + str(record.exc_info) for record in caplog.records)
    assert "Diary" not in logged and "resourceSubscriptions" not in logged
