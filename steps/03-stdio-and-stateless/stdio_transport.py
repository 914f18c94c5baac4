"""stdio around the protocol core: one JSON message per line on stdin and stdout.

The client starts the server as a subprocess, so the process is the session. stdout
carries protocol messages and nothing else: one stray print() and the client reads
garbage. Logs go to stderr.
"""
import json
import logging
import sys

from protocol import INVALID_REQUEST, ProtocolError, Server, Session, error_response, is_stateless, parse_json

log = logging.getLogger("stdio")

MAX_LINE = 4 * 1024 * 1024  # bytes, as for an HTTP body; every byte of a line counts but its final \n


# region stdio
def serve_stdio(core: Server, stdin=sys.stdin.buffer, stdout=sys.stdout) -> None:
    """Answer messages until stdin closes (the client has gone), then return.

    It reads bytes, so that an overlong line and bytes that are not UTF-8 can be
    refused cleanly, and writes text: json.dumps produces plain ASCII."""
    session = Session()  # for the handshake era; 2026-07-28 requests use none
    try:
        while line := stdin.readline(MAX_LINE + 1):
            response = answer_line(core, session, stdin, line)
            if response is not None:
                write(stdout, response)
    except BrokenPipeError:  # the client closed our stdout: nobody is listening
        log.info("stdout closed; exiting")
        return
    log.info("stdin closed; exiting")


def answer_line(core: Server, session: Session, stdin, line: bytes) -> dict | list | None:
    if len(line) > MAX_LINE and not line.endswith(b"\n"):  # only part of the line was read
        skip_rest_of_line(stdin, line)
        return error_response(None, INVALID_REQUEST, f"Message over {MAX_LINE} bytes")
    if not line.strip():
        return None
    try:
        message = parse_json(line)
        if isinstance(message, list):
            return core.handle_batch(message, session) or None
    except ProtocolError as error:
        return error_response(None, error.code, error.message)
    return core.handle(message, None if is_stateless(message) else session)
# endregion stdio


# region stdio-lines
def write(stdout, message: dict | list) -> None:
    # json.dumps escapes newlines inside strings, so a message is always one line.
    stdout.write(json.dumps(message) + "\n")
    stdout.flush()


def skip_rest_of_line(stdin, line: bytes) -> None:
    while line and not line.endswith(b"\n"):
        line = stdin.readline(MAX_LINE)
# endregion stdio-lines
