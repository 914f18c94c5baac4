"""stdio around the protocol core: one JSON message per line on stdin and stdout.

The client starts the server as a subprocess, so the process is the session. stdout
carries protocol messages and nothing else: one stray print() and the client reads
garbage. Logs go to stderr.
"""
import json
import logging
import sys
import threading
import time

from protocol import (INTERNAL_ERROR, INVALID_REQUEST, LISTEN, ProtocolError, Server, Session, error_response,
                      id_of, is_stateless, kind_of, parse_json, valid_id)
from subscriptions import Listener

log = logging.getLogger("stdio")

MAX_LINE = 4 * 1024 * 1024  # bytes, as for an HTTP body; every byte of a line counts but its final \n
MAX_AT_ONCE = 8  # requests answered at once; the next line waits for one of them to end


# region stdio
def serve_stdio(core: Server, stdin=sys.stdin.buffer, stdout=sys.stdout) -> None:
    """Answer messages until stdin closes (the client has gone), then return.

    It reads bytes, so that an overlong line and bytes that are not UTF-8 can be
    refused cleanly, and writes text: json.dumps produces plain ASCII."""
    session = Session()  # for the handshake era; 2026-07-28 requests use none
    out = Lines(stdout)
    # The session hears of changes once its handshake is done (a 2026-07-28 client
    # never does one: it asks with subscriptions/listen instead).
    watching = Listener(lambda message: session.initialized and out.write(message), session.subscriptions, True)
    listening: dict = {}  # subscriptions/listen request id -> its Listener
    core.hub.add(watching)
    try:
        at_once = threading.BoundedSemaphore(MAX_AT_ONCE)
        while line := stdin.readline(MAX_LINE + 1):
            # A long request may send notifications (progress) before its answer:
            # on stdio they are lines like any other.
            if answers_alone(line):
                at_once.acquire()
                threading.Thread(target=answer_alone, args=(core, session, stdin, line, out, listening, at_once),
                                 daemon=True).start()
                continue
            response = answer_line(core, session, stdin, line, out, listening)
            if response is not None:
                out.write(response)
        finish_answers(core, at_once)
    except BrokenPipeError:  # the client closed our stdout: nobody is listening
        log.info("stdout closed; exiting")
        return
    finally:
        for listener in [watching, *listening.values()]:
            core.hub.remove(listener)
    log.info("stdin closed; exiting")
# endregion stdio


# region lines
class Lines:
    """stdout, one message a line. Three threads write here: the request loop, the
    watcher's poller and its worker. Without the lock two messages written at
    once could interleave, and the client would read two broken lines."""

    def __init__(self, stdout):
        self.stdout, self.lock = stdout, threading.Lock()

    def write(self, message: dict | list) -> None:
        # json.dumps escapes newlines inside strings, so a message is always one line.
        line = json.dumps(message) + "\n"
        with self.lock:
            self.stdout.write(line)
            self.stdout.flush()
# endregion lines


# region at-once
def answers_alone(line: bytes) -> bool:
    """A tools/call is answered in a thread of its own, so that a search is answered while
    a reindex runs. Everything else keeps the order it came in: initialize before what
    follows it, a notification before the next line, a listen before its cancel."""
    if b'"tools/call"' not in line or len(line) > MAX_LINE:  # the quick look first: most lines are not
        return False
    try:
        message = json.loads(line)
    except ValueError:  # answer_line says what is wrong with it, in order
        return False
    return isinstance(message, dict) and message.get("method") == "tools/call" and "id" in message


def finish_answers(core: Server, at_once, seconds: float = 30.0) -> None:
    """stdin has closed: the answers under way are written before the process ends, a
    reindex told to stop at its next note, so that no client waits minutes for an exit."""
    core.under_way.cancel_all()
    deadline = time.monotonic() + seconds
    for _ in range(MAX_AT_ONCE):
        if not at_once.acquire(timeout=max(0.0, deadline - time.monotonic())):
            log.warning("stdin closed; exiting with an answer still under way")
            return


def answer_alone(core: Server, session: Session, stdin, line: bytes, out: Lines, listening: dict, at_once) -> None:
    try:
        response = answer_line(core, session, stdin, line, out, listening)
        if response is not None:
            out.write(response)
    except BrokenPipeError:  # the client closed our stdout; the read loop finds out too
        pass
    finally:
        at_once.release()
# endregion at-once


def answer_line(core: Server, session: Session, stdin, line: bytes, out: Lines, listening: dict):
    """The response to one line, if any; subscriptions/listen and its cancelling are answered here."""
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
    stop_listening(core, message, listening)  # a notification: it may carry no _meta, so no era
    if not is_stateless(message):
        return core.handle(message, session, notify=out.write)
    if isinstance(message, dict) and message.get("method") == LISTEN and "id" in message:
        return listen(core, message, out, listening)
    return core.handle(message, None, notify=out.write)


# region stdio-listen
def listen(core: Server, message: dict, out: Lines, listening: dict) -> dict | None:
    """2026-07-28: a subscription is a request answered only when it ends. On stdio
    it ends when the client cancels it, or when the process ends."""
    try:
        kind_of(message)  # the envelope first, as Server.handle checks it for every other method
        if message["id"] in listening:
            raise ProtocolError(INVALID_REQUEST, f"Subscription {message['id']!r} is already listening")
        listening[message["id"]] = core.listen(message, out.write)
    except ProtocolError as error:
        return error_response(id_of(message), error.code, error.message, error.data)
    except Exception:  # as Server.handle does: one message must never end the process
        log.exception("failed to open a subscription")  # never the message: it may hold anything
        return error_response(id_of(message), INTERNAL_ERROR, "Internal error; the server log has details")
    return None  # the acknowledgement is on its way; the answer comes at the end
# endregion stdio-listen


def stop_listening(core: Server, message, listening: dict) -> None:
    """notifications/cancelled naming a subscriptions/listen request ends that subscription;
    naming a 2026-07-28 request under way (one without a session), it tells it to stop."""
    if not (isinstance(message, dict) and message.get("method") == "notifications/cancelled"):
        return
    params = message.get("params")
    request_id = params.get("requestId") if isinstance(params, dict) else None
    if valid_id(request_id) and request_id in listening:  # not True, which Python takes for 1
        core.close_subscription(listening.pop(request_id))  # cancelled: no answer is sent
    core.cancel(None, params)


def skip_rest_of_line(stdin, line: bytes) -> None:
    while line and not line.endswith(b"\n"):
        line = stdin.readline(MAX_LINE)
