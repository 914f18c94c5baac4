"""One log line per request: what was asked, how it ended, how long it took.

The line names the method, the tool or resource it aimed at and the outcome. It
never carries a note's text, nor any argument but a path: a log is kept, copied and
shown to whoever helps with a bug, and the vault's owner meant none of them to read
their notes.
"""
import json
import logging

log = logging.getLogger("request")

LONGEST = 200  # characters of a name or path; a longer one is cut, the line stays a line


# region log-request
def log_request(message, response: dict | None, seconds: float) -> None:
    """Log one answered message; a notification, which gets no answer, gets no line."""
    if response is None:
        return
    method = message.get("method") if isinstance(message, dict) else None
    params = message.get("params") if isinstance(message, dict) else None
    fields = [escaped(method) if isinstance(method, str) else "(no method)"]
    fields += target(method, params if isinstance(params, dict) else {})
    fields += [outcome(response), f"{seconds * 1000:.1f} ms"]
    log.info("%s", " ".join(fields))


def target(method, params: dict) -> list[str]:
    """The tool or resource a request aims at, and the path it names: nothing else."""
    if method == "tools/call":
        arguments = params.get("arguments")
        path = arguments.get("path") if isinstance(arguments, dict) else None
        return [f"tool={escaped(params.get('name'))}"] + ([f"path={quoted(path)}"] if isinstance(path, str) else [])
    if isinstance(params.get("uri"), str):  # resources/read, resources/subscribe, ...
        return [f"uri={quoted(params['uri'])}"]
    return []
# endregion log-request


def outcome(response: dict) -> str:
    """ok, isError (the tool ran and failed; the model reads why), or the JSON-RPC error code."""
    if "error" in response:
        return f"error {response['error'].get('code')}"
    result = response.get("result")
    return "isError" if isinstance(result, dict) and result.get("isError") is True else "ok"


def quoted(value) -> str:
    """A client's string as JSON writes it, quotes and all: a newline or a control
    character in it cannot start a line of its own that looks like the server's."""
    if not isinstance(value, str):
        return "(none)" if value is None else type(value).__name__
    text = json.dumps(value if len(value) <= LONGEST else value[:LONGEST] + "...", ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace").decode()  # a lone surrogate as \ud800


def escaped(value) -> str:
    """The same without the quotes, for a method or a tool name, which as a rule hold no spaces."""
    shown = quoted(value)
    return shown[1:-1] if isinstance(value, str) else shown
