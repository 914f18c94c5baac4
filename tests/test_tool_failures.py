"""A tool that fails in a way no one foresaw answers with a result the model can read
(isError, a word that the log has details), never with a JSON-RPC error that ends
the call: in every distinct copy of tools.py, whose call_tool keeps that promise."""
import dataclasses
import inspect
import logging

import pytest

from helpers import distinct_copies, step_modules
from manifest import find_step


def broken(*_arguments):
    raise RuntimeError("a bug no one foresaw")


@pytest.mark.parametrize("step", distinct_copies("tools.py", since=2))
def test_an_unforeseen_failure_inside_a_tool_is_an_error_result_and_a_log_line(step, caplog):
    with step_modules(find_step(step).path):
        import tools
    tool = next(tool for tool in tools.TOOLS.values() if not tool.input_schema.get("required"))
    failing = dataclasses.replace(tool, run=broken)
    extra = [None] * (len(inspect.signature(tools.call_tool).parameters) - 2)  # the Context, from step 4

    with caplog.at_level(logging.ERROR):
        result = tools.call_tool(failing, {}, *extra)

    assert result["isError"] is True
    assert result["content"][0]["text"] == f"The tool {tool.name} failed unexpectedly; the server log has details."
    assert "a bug no one foresaw" not in result["content"][0]["text"]  # the details stay in the log
    assert "a bug no one foresaw" in caplog.text
