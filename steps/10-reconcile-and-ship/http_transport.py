"""Streamable HTTP around the protocol core: one endpoint, /mcp.

Everything here is about HTTP: which requests to refuse before reading them, which
era and session a message belongs to, and whether a response goes out as JSON or
as an SSE stream. The protocol itself lives in protocol.py.
"""
import base64
import binascii
import errno
import hmac
import json
import logging
import os
import queue
import re
import secrets
import select
import socket
import sys
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager, nullcontext
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from limits import Limits, Slots, Watchdog
from protocol import HANDSHAKE_VERSIONS, HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, LISTEN
from protocol import META_VERSION, METHOD_NOT_FOUND, PARSE_ERROR, SUPPORTED_VERSIONS, UNSUPPORTED_VERSION
from protocol import ProtocolError, Server, Session, error_response, id_of, is_stateless, kind_of, parse_json
from subscriptions import Streams, pump

log = logging.getLogger("http")

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
AUTHORITY = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:[0-9]{1,5})?", re.IGNORECASE)  # host[:port]
# In the stateless era the status tells what went wrong, before anyone parses the body.
# The specification fixes 404 for an unknown method and 400 for header, version and
# _meta problems; 400 for the rest follows the official SDK. Anything else: 200.
STATELESS_STATUS = {
    METHOD_NOT_FOUND: 404,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_VERSION: 400,
    INVALID_PARAMS: 400,
    INVALID_REQUEST: 400,
    PARSE_ERROR: 400,
}


class HttpError(Exception):
    """Refuse a request with an HTTP status and a JSON-RPC error body."""

    def __init__(self, status: int, message: str, code: int = INVALID_REQUEST, request_id=None, data=None,
                 headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.code, self.request_id, self.data = status, message, code, request_id, data
        self.headers = headers or {}


class Sessions:
    """Live sessions by id, least recently used first. Handler threads share it, hence the lock.

    Sessions are cheap but not free, and a client that never sends DELETE leaves
    its session behind: idle ones expire, and when the table is full the least
    recently used makes way. Either way its client gets 404 and starts again."""

    def __init__(self, limits: Limits):
        self._by_id: OrderedDict[str, tuple[Session, float]] = OrderedDict()  # id -> (session, last used)
        self._lock = threading.Lock()
        self._limits = limits

    def start(self, session: Session) -> str:
        session_id = secrets.token_urlsafe(32)  # unguessable, visible ASCII only
        with self._lock:
            self._expire(time.monotonic())
            if len(self._by_id) >= self._limits.max_sessions:
                self._by_id.popitem(last=False)
            self._by_id[session_id] = (session, time.monotonic())
        return session_id

    def get(self, session_id: str) -> Session | None:
        with self._lock:
            now = time.monotonic()
            self._expire(now)
            if session_id not in self._by_id:
                return None
            session, _ = self._by_id.pop(session_id)
            self._by_id[session_id] = (session, now)  # now the most recently used
            return session

    def end(self, session_id: str) -> bool:
        with self._lock:
            return self._by_id.pop(session_id, None) is not None

    def _expire(self, now: float) -> None:
        # The oldest come first, so the loop stops at the first session still in use.
        while self._by_id:
            _, (_, last_used) = next(iter(self._by_id.items()))
            if now - last_used < self._limits.session_idle_seconds:
                return
            self._by_id.popitem(last=False)


class McpHttpServer(ThreadingHTTPServer):
    request_queue_size = 1024  # connections the kernel holds for us in a burst (the default is 5)

    def __init__(self, host: str, port: int, core: Server, limits: Limits = Limits(), token: str | None = None):
        if ":" in host:  # an IPv6 address such as ::1
            self.address_family = socket.AF_INET6
        super().__init__((host, port), McpHandler)
        if hasattr(os, "register_at_fork"):  # not on Windows, which cannot fork
            # A process forked from this one (a build's workers, parallel_build.py) would hold
            # the port too: killed, this server could not be started again on it until they
            # noticed, and the connections the kernel queued meanwhile would never be accepted.
            os.register_at_fork(after_in_child=self.socket.close)
        self.core, self.limits, self.sessions = core, limits, Sessions(limits)
        self.allowed_hosts = LOCAL_HOSTS | {host}
        self.token = token  # with one, every request must carry it (McpHandler.check_token)
        self.watchdog = Watchdog(tick=min(0.5, limits.request_seconds / 4))
        self.slots = Slots(limits.max_connections, self.watchdog)
        self.large_bodies = threading.BoundedSemaphore(limits.large_at_once)
        self.streams = Streams(core.hub, limits.max_streams)

    def process_request(self, request, client_address):
        """Serve a connection in a thread of its own, if it gets a slot; else refuse it at once."""
        if not self.slots.take():
            return self.refuse_busy(request)
        try:
            super().process_request(request, client_address)
        except Exception:
            self.slots.release(request)  # no thread started, so nobody else will
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release(request)

    def refuse_busy(self, request: socket.socket) -> None:
        """503 without a thread. The socket is closed a second later, not now: closing
        it while the client's request is still unread would reset the connection,
        and the client might lose the answer."""
        try:
            request.setblocking(False)
            request.send(busy_response())
            request.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.watchdog.close_later(request, 1.0)

    def room_for(self, length: int):
        """Small bodies go straight through; large ones take turns to be parsed and
        served, since parsed JSON can take 17 times the memory of its text. A body
        takes its turn once it has arrived whole, so the turns go to work, not waiting."""
        return self.large_bodies if length > self.limits.large_body else nullcontext()

    def get_request(self):
        try:
            return super().get_request()
        except OSError as error:
            if error.errno in (errno.EMFILE, errno.ENFILE):
                # The listening socket stays ready while accept() fails, so without
                # a pause this loop would spin at full speed and starve everyone.
                log.warning("out of file descriptors: no new connections for half a second")
                time.sleep(0.5)
            raise

    def handle_error(self, request, client_address):
        """A connection failed outside our handlers: a client that left is no news."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            log.info("%s left: %s", client_address[0], error)
        else:
            log.exception("connection from %s failed", client_address[0])


def busy_response() -> bytes:
    """The whole 503 answer, written by hand: no handler thread exists to send it."""
    reason = "Service unavailable: too many connections at once; try again in a second"
    body = json.dumps(error_response(None, INTERNAL_ERROR, reason)).encode()
    head = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
    return f"{head}Connection: close\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body


class McpHandler(BaseHTTPRequestHandler):
    server: McpHttpServer
    protocol_version = "HTTP/1.1"  # keep-alive: one connection carries many requests
    # Headers and body leave in separate small writes; with Nagle's algorithm on, the
    # kernel would hold the second until the client acknowledges the first (~40 ms).
    disable_nagle_algorithm = True

    def setup(self):
        # A socket timeout ends any one read or write that waits this long. The
        # watchdog ends slow requests sooner; this ends writes to a client that
        # stopped reading.
        self.timeout = 2 * self.server.limits.request_seconds
        super().setup()

    def handle_one_request(self):
        """Each request on a connection must arrive whole within the deadline."""
        self.answered = False  # no status line written yet
        self.server.watchdog.arm(self.connection, self.server.limits.request_seconds)
        try:
            super().handle_one_request()
        finally:
            self.server.watchdog.disarm(self.connection)

    def handle_expect_100(self):
        """A client that asks before sending a large body (curl does above 1 MiB) hears
        at once if it would be refused, instead of sending the body for nothing."""
        try:
            self.guard_door()
            self.require_headers()
            self.content_length()
        except HttpError as error:
            self.refuse(error)
            return False
        return super().handle_expect_100()

    def do_POST(self):
        self.answer(self.post)

    def post(self):
        self.guard_door()
        self.require_headers()
        length = self.content_length()
        body = self.read_body(length)  # first: a client that sends slowly holds no turn
        with self.server.room_for(length):
            self.serve(parse_body(body))

    def serve(self, message):
        if isinstance(message, list):
            return self.post_batch(message)
        kind = kind_of_or_400(message)
        if self.stateless_era() or is_stateless(message):
            return self.post_stateless(message, kind)
        # A handshake version in the header, or none: the session's version applies.
        session, is_new = self.session_for(message)
        stream, response = self.handled(message, kind, session)
        if kind != "request":
            return self.send_body(202)  # notifications and responses are never answered
        headers = {}
        if is_new and "result" in response:
            headers["Mcp-Session-Id"] = self.server.sessions.start(session)
        if stream:
            stream.finish(response, headers)
        else:
            self.send_json(200, response, headers)

    def handled(self, message: dict, kind: str, session: Session | None) -> tuple["EventStream | None", dict]:
        """The core's response, and the SSE stream that carried what came before it when
        the client asked for progress: the stream opens with the first notification."""
        stream = EventStream(self) if kind == "request" and wants_stream(message) else None
        return stream, self.server.core.handle(message, session, notify=stream.send if stream else None)

    def post_batch(self, messages: list):
        """An array of messages: only a session that agreed on 2025-03-26 may send one."""
        if self.stateless_era():
            raise HttpError(400, "Batches are not part of 2026-07-28: send one message per request")
        session, _ = self.session_for(messages)
        try:
            responses = self.server.core.handle_batch(messages, session)
        except ProtocolError as error:
            raise HttpError(400, error.message, error.code) from None
        if responses:
            self.send_json(200, responses)
        else:
            self.send_body(202)  # only notifications and responses: nothing to answer

    # region post-stateless
    def post_stateless(self, message, kind: str):
        """2026-07-28: no session, and the routing headers must agree with the body."""
        version = self.header("MCP-Protocol-Version")
        if version is not None and version not in SUPPORTED_VERSIONS:
            data = {"supported": list(SUPPORTED_VERSIONS), "requested": version}
            reason = f"Unsupported protocol version {version!r}"
            raise HttpError(400, reason, UNSUPPORTED_VERSION, id_of(message), data)
        if kind == "response":
            raise HttpError(400, "A 2026-07-28 client sends no responses: the server asks it nothing")
        if kind == "request":
            check_routing_headers(message, self.headers)
            if message["method"] == LISTEN:
                return self.listen(message)
        stream, response = self.handled(message, kind, None)
        if kind != "request":
            return self.send_body(202)
        status = STATELESS_STATUS.get(response.get("error", {}).get("code"), 200)
        if stream and (stream.started or status == 200):
            stream.finish(response, {})
        else:
            self.send_json(status, response)
    # endregion post-stateless

    # region listen
    def listen(self, message: dict):
        """2026-07-28 subscriptions/listen: an SSE answer that stays open. The
        acknowledgement comes first, notifications follow, and the response comes
        last, if the server ends the subscription; the client ends it by closing."""
        stream, outbox = EventStream(self), queue.Queue()
        try:
            listener = self.server.core.listen(message, outbox.put)
        except ProtocolError as error:
            response = error_response(message["id"], error.code, error.message, error.data)
            return self.send_json(STATELESS_STATUS.get(error.code, 200), response)
        listener.on_close = lambda: outbox.put(None)
        try:
            with self.stream_slot(message["id"]):
                pump(outbox, stream, still_wanted=lambda: True)
                stream.finish(self.server.core.close_subscription(listener), {})
        finally:
            self.server.core.hub.remove(listener)
    # endregion listen

    # region stream-slot
    @contextmanager
    def stream_slot(self, request_id=None):
        """A stream takes a place in the streams' budget and lends its connection slot back."""
        if not self.server.streams.take():
            reason = "Service unavailable: too many streams open at once; try again later"
            raise HttpError(503, reason, INTERNAL_ERROR, request_id)
        # The deadline is for a request to arrive; this one has, and its answer lasts.
        self.server.watchdog.disarm(self.connection)
        self.server.slots.lend(self.connection)
        try:
            yield
        finally:
            self.server.streams.give_back()
            if not self.server.slots.reclaim(self.connection):
                self.close_connection = True  # every slot is busy: the connection ends with the stream
    # endregion stream-slot

    def answer(self, handle):
        """Run a handler so that every failure still gets an HTTP answer, and at most one."""
        try:
            handle()
        except HttpError as error:
            self.refuse(error)
        except (ConnectionError, TimeoutError) as error:  # the client left, or stopped reading
            log.info("%s: no answer sent: %s", self.address_string(), error)
            self.close_connection = True
        except Exception:
            log.exception("failed to answer %s %s", self.command, printable(self.path))
            self.close_connection = True
            if not self.answered:  # half an answer is on the wire already: a new one would corrupt it
                self.send_json(500, error_response(None, INTERNAL_ERROR, "Internal error; the server log has details"))

    def refuse(self, error: "HttpError"):
        # The refused request's body may still be on its way; rather than read it for
        # nothing, close the connection after the answer.
        body = error_response(error.request_id, error.code, error.message, error.data)
        self.send_json(error.status, body, {"Connection": "close", **error.headers})

    def guard_door(self):
        """Refuse what must not reach the protocol at all."""
        self.check_token()
        if urlsplit(self.path).path != "/mcp":
            raise HttpError(404, "Not found: the MCP endpoint is /mcp")
        # A web page can make your browser send requests to 127.0.0.1. The browser
        # names the page in Origin; a request with no Origin (DNS rebinding from an
        # old browser, say) still names the site it thinks it calls in Host.
        hosts, origins = self.headers.get_all("Host", []), self.headers.get_all("Origin", [])
        if len(hosts) != 1 or not self.host_allowed(hosts[0]):
            raise HttpError(403, f"Forbidden: Host {printable(', '.join(hosts))!r} is not this local server")
        if len(origins) > 1 or (origins and origin_host(origins[0]) not in self.server.allowed_hosts):
            raise HttpError(403, f"Forbidden: Origin {printable(', '.join(origins))!r} may not call this server")

    # region check-token
    def check_token(self):
        """With --token, a request without it, or with another, goes no further."""
        if self.server.token is None:
            return
        scheme, _, sent = self.headers.get("Authorization", "").strip().partition(" ")
        # compare_digest takes as long whatever byte differs first, so the time of a
        # refusal tells a guesser nothing about how much of the token was right.
        if scheme.lower() != "bearer" or not hmac.compare_digest(sent.strip().encode(), self.server.token.encode()):
            raise HttpError(401, "Unauthorized: send the server's token as Authorization: Bearer <token>",
                            headers={"WWW-Authenticate": 'Bearer realm="vault-mcp"'})

    def host_allowed(self, host: str) -> bool:
        """The Host check stops a web page that renamed itself to reach a local server
        (DNS rebinding). A token stops it too, since the page cannot know it; so with a
        token any name of this machine will do, as another device uses (its address)."""
        return self.server.token is not None or host_of(host) in self.server.allowed_hosts
    # endregion check-token

    def accepted(self) -> set[str]:
        """The media types named in Accept, without their parameters."""
        return {part.split(";")[0].strip().lower() for part in self.headers.get("Accept", "").split(",")}

    def require_headers(self):
        accepted = self.accepted()
        takes_json = accepted & {"application/json", "application/*", "*/*"}
        takes_sse = accepted & {"text/event-stream", "text/*", "*/*"}
        if not (takes_json and takes_sse):
            raise HttpError(406, "Not acceptable: Accept must list application/json and text/event-stream")
        if self.headers.get_content_type() != "application/json":
            raise HttpError(415, "Unsupported media type: send Content-Type: application/json")

    def content_length(self) -> int:
        if "Transfer-Encoding" in self.headers:  # a chunked body; the standard library reads none
            raise HttpError(411, "Length required: send the body with Content-Length, not chunked")
        lengths = {value.strip() for value in self.headers.get_all("Content-Length", [])}
        if not lengths:
            raise HttpError(411, "Length required: send Content-Length")
        if len(lengths) > 1:
            raise HttpError(400, "Bad request: two different Content-Length headers")
        length = lengths.pop()
        if not (length.isascii() and length.isdigit()):
            raise HttpError(400, "Bad Content-Length")
        # Count the digits before int(): Python refuses to convert thousands of them.
        if len(length.lstrip("0")) > 12 or int(length) > self.server.limits.max_body:
            raise HttpError(413, f"Payload too large: the limit is {self.server.limits.max_body} bytes")
        return int(length)

    def read_body(self, length: int) -> bytes:
        body = self.rfile.read(length)
        if not self.server.watchdog.disarm(self.connection):
            seconds = self.server.limits.request_seconds
            raise HttpError(408, f"Request timeout: a request must arrive whole within {seconds:g} s")
        if len(body) < length:
            raise HttpError(400, "Bad request: the body ended before Content-Length bytes")
        return body

    def session_for(self, message) -> tuple[Session, bool]:
        """The session a message (or a batch) belongs to, and whether it is a new one."""
        session_id = self.header("Mcp-Session-Id")
        if session_id is None:
            if isinstance(message, dict) and message.get("method") == "initialize" and "id" in message:
                return Session(), True
            reason = "Bad request: Mcp-Session-Id header required (initialize first)"
            raise HttpError(400, reason, request_id=id_of(message))
        return self.known_session(session_id, id_of(message)), False

    def known_session(self, session_id: str, request_id=None) -> Session:
        """The session an id names, or 404: it ended, expired or never was, and the
        client must initialize again."""
        session = self.server.sessions.get(session_id)
        if session is None:
            reason = "Session not found: it ended, expired or never existed; initialize again"
            raise HttpError(404, reason, request_id=request_id)
        return session

    def do_DELETE(self):
        self.answer(self.delete)

    def delete(self):
        """The client ends its session (handshake era only)."""
        self.guard_door()
        if self.stateless_era():
            return self.refuse_method()
        session_id = self.header("Mcp-Session-Id")
        if session_id is None:
            raise HttpError(400, "Bad request: DELETE needs the Mcp-Session-Id header")
        if not self.server.sessions.end(session_id):
            raise HttpError(404, "Session not found: it ended, expired or never existed")
        self.server.streams.close_stream(session_id)  # the session's GET stream ends with it
        self.send_body(204)

    def do_GET(self):
        self.answer(self.get)

    # region get
    def get(self):
        """The handshake era's GET stream: what the server says unasked, to one session.
        It stays open until the session ends, the client leaves or the server stops."""
        self.guard_door()
        if self.stateless_era():
            return self.refuse_method()  # 2026-07-28 listens with subscriptions/listen instead
        if not self.accepted() & {"text/event-stream", "text/*", "*/*"}:
            raise HttpError(406, "Not acceptable: the GET stream is text/event-stream; send that in Accept")
        session_id = self.header("Mcp-Session-Id")
        if session_id is None:
            raise HttpError(400, "Bad request: GET needs the Mcp-Session-Id header (initialize first)")
        session = self.known_session(session_id)
        # Each quiet interval also touches the session, so a stream keeps it alive.
        def still_wanted():
            return self.server.sessions.get(session_id) is not None

        with self.stream_slot():
            stream = EventStream(self)
            if not self.server.streams.follow_session(session_id, session.subscriptions, stream, still_wanted):
                raise HttpError(409, "Conflict: this session has a GET stream open already")
            self.end_stream()
    # endregion get

    def do_PUT(self):
        self.answer(self.refuse_method)

    do_PATCH = do_PUT

    def refuse_method(self):
        self.guard_door()
        allowed = "GET, POST, DELETE"
        if self.stateless_era():
            allowed, reason = "POST", "Method not allowed: in 2026-07-28 every request is a POST"
        else:
            reason = "Method not allowed: send JSON-RPC with POST, listen with GET, end a session with DELETE"
        self.send_json(405, error_response(None, INVALID_REQUEST, reason), {"Allow": allowed})

    def stateless_era(self) -> bool:
        """A version header that is not a handshake one marks the 2026-07-28 era."""
        version = self.header("MCP-Protocol-Version")
        return version is not None and version not in HANDSHAKE_VERSIONS

    def header(self, name: str) -> str | None:
        """A header's value without the spaces around it; None if it is missing."""
        value = self.headers.get(name)
        return None if value is None else value.strip()

    def send_json(self, status: int, payload, headers: dict | None = None):
        self.send_body(status, json.dumps(payload).encode(), {"Content-Type": "application/json", **(headers or {})})

    def start_stream(self, headers: dict):
        """The head of an SSE answer. Over HTTP/1.1 the stream goes out in chunks, and
        the empty chunk at the end closes the stream but not the connection."""
        self.answered = True
        self.send_response(200)
        # X-Accel-Buffering: no asks proxies such as nginx to pass each event on at once.
        stream_headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        self.chunked = self.request_version == "HTTP/1.1"  # an HTTP/1.0 client reads until the connection closes
        if self.chunked:
            stream_headers["Transfer-Encoding"] = "chunked"
        else:
            self.close_connection = True
        for name, value in {**stream_headers, **headers}.items():
            self.send_header(name, value)
        self.end_headers()

    def write_chunk(self, data: bytes):
        if self.chunked:
            data = b"%x\r\n%s\r\n" % (len(data), data)  # the chunk's size in hex, then the chunk
        self.wfile.write(data)
        self.wfile.flush()  # each event leaves at once, not when a buffer fills

    def end_stream(self):
        if self.chunked:
            self.write_chunk(b"")  # the empty chunk: the stream ends, the connection stays

    def send_body(self, status: int, body: bytes = b"", headers: dict | None = None):
        self.answered = True
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if status != 204:  # "No Content" carries no body, so no length either
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_request(self, code="-", size="-"):
        # The access line and the core's request line (request_log.py) would say the
        # same thing twice: the core's says more (the tool, the outcome, the time) and
        # serves stdio too. So the access line is kept for what the core never sees, a
        # request the door refused (4xx, 5xx), and is debug otherwise.
        refused = isinstance(code, int) and code >= 400
        log.log(logging.INFO if refused else logging.DEBUG, "%s %s", self.address_string(),
                printable(f'"{self.requestline}" {int(code) if isinstance(code, int) else code}'))

    def log_message(self, fmt, *args):
        log.info("%s %s", self.address_string(), printable(fmt % args))


def printable(text: str) -> str:
    """Escape control characters (ESC, CR, LF...) in text a client chose, so that
    what it sends cannot forge log lines or recolour the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class EventStream:
    """An SSE answer to one request: notifications while it runs, then its response.

    The status line and headers leave with the first event, not before: until
    then the request may still be answered another way (with a new session's id,
    or with a plain JSON error and its own status)."""

    def __init__(self, handler: McpHandler):
        self.handler, self.started = handler, False

    def open(self, headers: dict | None = None) -> None:
        if not self.started:
            self.handler.start_stream(headers or {})
            self.started = True

    def send(self, message: dict, headers: dict | None = None) -> None:
        self.open(headers)
        self.handler.write_chunk(f"event: message\ndata: {json.dumps(message)}\n\n".encode())

    def keep_alive(self) -> None:
        self.handler.write_chunk(b": keep-alive\n\n")  # a comment: clients skip it

    def client_gone(self) -> bool:
        """The client closed its end: the socket reads as ended. (Nothing else should
        arrive while a stream is open; a byte that does is left for later.)"""
        connection = self.handler.connection
        readable, _, _ = select.select([connection], [], [], 0)
        if not readable:
            return False
        try:
            return connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def finish(self, response: dict, headers: dict) -> None:
        self.send(response, headers)
        self.handler.end_stream()


def host_of(authority: str) -> str | None:
    """'localhost:3000' -> 'localhost', '[::1]:3000' -> '::1'; None unless it is a plain host[:port]."""
    match = AUTHORITY.fullmatch(authority.strip())
    return match.group(1).strip("[]").lower() if match else None


def origin_host(origin: str) -> str | None:
    """'http://localhost:5173' -> 'localhost'; None for 'null' or anything else odd."""
    scheme, _, authority = origin.strip().partition("://")
    return host_of(authority) if scheme.lower() in ("http", "https") else None


def parse_body(body: bytes):
    try:
        return parse_json(body)
    except ProtocolError as error:
        raise HttpError(400, error.message, error.code) from None


def kind_of_or_400(message) -> str:
    """Validate before routing: a malformed message is refused with 400, before any session is looked up."""
    try:
        return kind_of(message)
    except ProtocolError as error:
        raise HttpError(400, error.message, error.code, id_of(message)) from None


# region routing-headers
# The requests whose Mcp-Name header repeats a parameter: a tool's or prompt's name,
# a resource's URI.
NAMED_BY = {"tools/call": "name", "resources/read": "uri", "prompts/get": "name"}


def check_routing_headers(message: dict, headers) -> None:
    """MCP-Protocol-Version, Mcp-Method and (for the methods in NAMED_BY) Mcp-Name
    repeat what the body says, so that proxies and load balancers can route without
    parsing JSON. They must agree with the body exactly."""
    params = message.get("params", {})
    meta = params.get("_meta")
    if not isinstance(meta, dict) or not isinstance(meta.get(META_VERSION), str):
        return  # the core answers a missing or broken _meta with a clearer error
    expected = {"MCP-Protocol-Version": meta[META_VERSION], "Mcp-Method": message["method"]}
    if message["method"] in NAMED_BY:
        expected["Mcp-Name"] = params.get(NAMED_BY[message["method"]])
    for name, value in expected.items():
        if not isinstance(value, str):
            continue  # the body itself is wrong: the core says so more clearly
        sent = [v.strip(" \t") for v in headers.get_all(name) or []]
        if not header_matches(name, sent, value):
            shown = ", ".join(json.dumps(v) for v in sent) or "missing"
            reason = f"Header mismatch: {name} is {shown}; the body says {json.dumps(value)}"
            raise HttpError(400, reason, HEADER_MISMATCH, id_of(message))
# endregion routing-headers


def header_matches(name: str, sent: list[str], value: str) -> bool:
    if len(sent) != 1 or not (sent[0].isascii() and sent[0].isprintable()):
        return False  # missing, repeated, or not plain ASCII
    return (decode_name(sent[0]) if name == "Mcp-Name" else sent[0]) == value


def decode_name(value: str) -> str | None:
    """Mcp-Name, and only it, may carry a name that is not plain ASCII, as
    =?base64?<the UTF-8 bytes in base64>?=."""
    if not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    try:
        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def wants_stream(message: dict) -> bool:
    """Answer with SSE when the client asked for progress: only a stream can carry
    notifications before the response. Everything else gets plain JSON."""
    meta = message.get("params", {}).get("_meta")
    return isinstance(meta, dict) and "progressToken" in meta
