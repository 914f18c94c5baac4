"""The tools this server offers. Each is described once, as data, and run by a function.

A tool's failures (a bad argument, a missing note) are results with isError: true,
written for the model to read and act on.
"""
import logging
from dataclasses import dataclass
from typing import Callable

log = logging.getLogger("tools")


@dataclass
class Tool:
    name: str
    description: str
    input_schema: dict
    run: Callable[[dict], dict]

    def declaration(self) -> dict:
        return {"name": self.name, "description": self.description, "inputSchema": self.input_schema}


def text_result(text: str, error: bool = False) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def ping(arguments: dict) -> dict:
    return text_result("pong")


def echo(arguments: dict) -> dict:
    text = arguments.get("text")
    if not isinstance(text, str):
        return text_result("echo needs the argument 'text', a string.", error=True)
    return text_result(text)


TOOLS = {
    tool.name: tool
    for tool in [
        Tool("ping", "Answer 'pong'. Proves the round trip works.", {"type": "object", "properties": {}}, ping),
        Tool(
            "echo",
            "Return the given text unchanged.",
            {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            echo,
        ),
    ]
}


# region call-tool
def call_tool(tool: Tool, arguments) -> dict:
    """Run a tool; whatever goes wrong inside it becomes a result the model can read."""
    if not isinstance(arguments, dict):
        return text_result("Tool arguments must be a JSON object.", error=True)
    try:
        return tool.run(arguments)
    except Exception:
        log.exception("tool %s failed", tool.name)
        return text_result(f"The tool {tool.name} failed unexpectedly; the server log has details.", error=True)
# endregion call-tool
