"""stdio around the protocol core: one JSON message per line on stdin and stdout.

The client starts the server as a subprocess, so the process is the session. stdout
carries protocol messages and nothing else: one stray print() and the client reads
garbage. Logs go to stderr.
"""
import json
import logging
import sys

from protocol import INVALID_REQUEST, PARSE_ERROR, Server, Session, error_response, is_stateless

log = logging.getLogger("stdio")

MAX_LINE = 4 * 1024 * 1024  # the same limit as the HTTP body


# region stdio
def serve_stdio(core: Server, stdin=sys.stdin.buffer, stdout=sys.stdout) -> None:
    """Answer messages until stdin closes (the client has gone), then return."""
    session = Session()
    while line := stdin.readline(MAX_LINE + 1):
        if len(line) > MAX_LINE:
            skip_rest_of_line(stdin, line)
            write(stdout, error_response(None, INVALID_REQUEST, f"Message over {MAX_LINE} bytes"))
            continue
        if not line.strip():
            continue
        try:
            message = json.loads(line.decode("utf-8"))
        except RecursionError:  # the parser recurses once per [ or {
            write(stdout, error_response(None, PARSE_ERROR, "Parse error: the JSON is nested too deeply"))
            continue
        except ValueError:  # bad JSON, or bytes that are not UTF-8
            write(stdout, error_response(None, PARSE_ERROR, "Parse error: the line is not JSON"))
            continue
        response = core.handle(message, None if is_stateless(message) else session)
        if response is not None:
            write(stdout, response)
    log.info("stdin closed; exiting")


def write(stdout, message: dict) -> None:
    # json.dumps escapes newlines inside strings, so a message is always one line.
    stdout.write(json.dumps(message) + "\n")
    stdout.flush()


def skip_rest_of_line(stdin, line: bytes) -> None:
    while line and not line.endswith(b"\n"):
        line = stdin.readline(MAX_LINE)
# endregion stdio
