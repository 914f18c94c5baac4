"""Streamable HTTP around the protocol core: one endpoint, /mcp.

Everything here is about HTTP: which requests to refuse before reading them, which
session a message belongs to, and whether a response goes out as JSON or as an
SSE stream. The protocol itself lives in protocol.py.
"""
import errno
import json
import logging
import re
import secrets
import socket
import sys
import threading
import time
from collections import OrderedDict
from contextlib import nullcontext
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from limits import Limits, Slots, Watchdog
from protocol import INTERNAL_ERROR, INVALID_REQUEST, SUPPORTED_VERSIONS, ProtocolError, Server, Session
from protocol import error_response, id_of, kind_of, parse_json

log = logging.getLogger("http")

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
AUTHORITY = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:[0-9]{1,5})?", re.IGNORECASE)  # host[:port]

class HttpError(Exception):
    """Refuse a request with an HTTP status and a JSON-RPC error body."""

    def __init__(self, status: int, message: str, code: int = INVALID_REQUEST, request_id=None):
        super().__init__(message)
        self.status, self.message, self.code, self.request_id = status, message, code, request_id


class Sessions:
    """Live sessions by id, least recently used first. Handler threads share it, hence the lock.

    Sessions are cheap but not free, and a client that never sends DELETE leaves
    its session behind: idle ones expire, and when the table is full the least
    recently used makes way. Either way its client gets 404 and starts again."""

    def __init__(self, limits: Limits):
        self._by_id: OrderedDict[str, tuple[Session, float]] = OrderedDict()  # id -> (session, last used)
        self._lock = threading.Lock()
        self._limits = limits

    # region sessions-start
    def start(self, session: Session) -> str:
        session_id = secrets.token_urlsafe(32)  # unguessable, visible ASCII only
        with self._lock:
            self._expire(time.monotonic())
            if len(self._by_id) >= self._limits.max_sessions:
                self._by_id.popitem(last=False)
            self._by_id[session_id] = (session, time.monotonic())
        return session_id
    # endregion sessions-start

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

    # region expire
    def _expire(self, now: float) -> None:
        # The oldest come first, so the loop stops at the first session still in use.
        while self._by_id:
            _, (_, last_used) = next(iter(self._by_id.items()))
            if now - last_used < self._limits.session_idle_seconds:
                return
            self._by_id.popitem(last=False)
    # endregion expire


class McpHttpServer(ThreadingHTTPServer):
    request_queue_size = 1024  # connections the kernel holds for us in a burst (the default is 5)

    def __init__(self, host: str, port: int, core: Server, limits: Limits = Limits()):
        if ":" in host:  # an IPv6 address such as ::1
            self.address_family = socket.AF_INET6
        super().__init__((host, port), McpHandler)
        self.core, self.limits, self.sessions = core, limits, Sessions(limits)
        self.allowed_hosts = LOCAL_HOSTS | {host}
        self.watchdog = Watchdog(tick=min(0.5, limits.request_seconds / 4))
        self.slots = Slots(limits.max_connections, self.watchdog)
        self.large_bodies = threading.BoundedSemaphore(limits.large_at_once)

    def process_request(self, request, client_address):
        """Serve a connection in a thread of its own, if it gets a slot; else refuse it at once."""
        if not self.slots.take():
            return self.refuse_busy(request)
        try:
            super().process_request(request, client_address)
        except Exception:
            self.slots.release()  # no thread started, so nobody else will
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    # region refuse-busy
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
    # endregion refuse-busy

    # region room-for
    def room_for(self, length: int):
        """Small bodies go straight through; large ones take turns to be parsed and
        served, since parsed JSON can take 17 times the memory of its text. A body
        takes its turn once it has arrived whole, so the turns go to work, not waiting."""
        return self.large_bodies if length > self.limits.large_body else nullcontext()
    # endregion room-for

    # region get-request
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
    # endregion get-request

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


# region handler-class
class McpHandler(BaseHTTPRequestHandler):
    server: McpHttpServer
    protocol_version = "HTTP/1.1"  # keep-alive: one connection carries many requests
    # Headers and body leave in separate small writes; with Nagle's algorithm on, the
    # kernel would hold the second until the client acknowledges the first (~40 ms).
    disable_nagle_algorithm = True
# endregion handler-class

    def setup(self):
        # A socket timeout ends any one read or write that waits this long. The
        # watchdog ends slow requests sooner; this ends writes to a client that
        # stopped reading.
        self.timeout = 2 * self.server.limits.request_seconds
        super().setup()

    # region deadline
    def handle_one_request(self):
        """Each request on a connection must arrive whole within the deadline."""
        self.answered = False  # no status line written yet
        self.server.watchdog.arm(self.connection, self.server.limits.request_seconds)
        try:
            super().handle_one_request()
        finally:
            self.server.watchdog.disarm(self.connection)
    # endregion deadline

    # region expect-100
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
    # endregion expect-100

    def do_POST(self):
        self.answer(self.post)

    # region post
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
        session, is_new = self.session_for(message)
        if not is_new:
            self.check_protocol_version(session, id_of(message))
        response = self.server.core.handle(message, session)
        if kind != "request":
            return self.send_body(202)  # notifications and responses are never answered
        headers = {}
        if is_new and "result" in response:
            headers["Mcp-Session-Id"] = self.server.sessions.start(session)
        if wants_stream(message):
            self.send_stream([response], headers)
        else:
            self.send_json(200, response, headers)
    # endregion post

    def post_batch(self, messages: list):
        """An array of messages: only a session that agreed on 2025-03-26 may send one."""
        session, _ = self.session_for(messages)
        self.check_protocol_version(session, None)
        try:
            responses = self.server.core.handle_batch(messages, session)
        except ProtocolError as error:
            raise HttpError(400, error.message, error.code) from None
        if responses:
            self.send_json(200, responses)
        else:
            self.send_body(202)  # only notifications and responses: nothing to answer

    # region answer
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
        body = error_response(error.request_id, error.code, error.message)
        self.send_json(error.status, body, {"Connection": "close"})
    # endregion answer

    # region guard-door
    def guard_door(self):
        """Refuse what must not reach the protocol at all."""
        if urlsplit(self.path).path != "/mcp":
            raise HttpError(404, "Not found: the MCP endpoint is /mcp")
        # A web page can make your browser send requests to 127.0.0.1. The browser
        # names the page in Origin; a request with no Origin (DNS rebinding from an
        # old browser, say) still names the site it thinks it calls in Host.
        hosts, origins = self.headers.get_all("Host", []), self.headers.get_all("Origin", [])
        if len(hosts) != 1 or host_of(hosts[0]) not in self.server.allowed_hosts:
            raise HttpError(403, f"Forbidden: Host {printable(', '.join(hosts))!r} is not this local server")
        if len(origins) > 1 or (origins and origin_host(origins[0]) not in self.server.allowed_hosts):
            raise HttpError(403, f"Forbidden: Origin {printable(', '.join(origins))!r} may not call this server")
    # endregion guard-door

    # region require-headers
    def require_headers(self):
        accepted = {part.split(";")[0].strip().lower() for part in self.headers.get("Accept", "").split(",")}
        takes_json = accepted & {"application/json", "application/*", "*/*"}
        takes_sse = accepted & {"text/event-stream", "text/*", "*/*"}
        if not (takes_json and takes_sse):
            raise HttpError(406, "Not acceptable: Accept must list application/json and text/event-stream")
        if self.headers.get_content_type() != "application/json":
            raise HttpError(415, "Unsupported media type: send Content-Type: application/json")
    # endregion require-headers

    # region content-length
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
    # endregion content-length

    def read_body(self, length: int) -> bytes:
        body = self.rfile.read(length)
        if not self.server.watchdog.disarm(self.connection):
            seconds = self.server.limits.request_seconds
            raise HttpError(408, f"Request timeout: a request must arrive whole within {seconds:g} s")
        if len(body) < length:
            raise HttpError(400, "Bad request: the body ended before Content-Length bytes")
        return body

    # region session-for
    def session_for(self, message) -> tuple[Session, bool]:
        """The session a message (or a batch) belongs to, and whether it is a new one."""
        session_id = self.header("Mcp-Session-Id")
        if session_id is None:
            if isinstance(message, dict) and message.get("method") == "initialize" and "id" in message:
                return Session(), True
            reason = "Bad request: Mcp-Session-Id header required (initialize first)"
            raise HttpError(400, reason, request_id=id_of(message))
        session = self.server.sessions.get(session_id)
        if session is None:
            reason = "Session not found: it ended, expired or never existed; initialize again"
            raise HttpError(404, reason, request_id=id_of(message))
        return session, False
    # endregion session-for

    def check_protocol_version(self, session: Session, request_id):
        # Without the header, the version the session agreed on is the answer.
        version = self.header("MCP-Protocol-Version")
        if version is None:
            version = session.protocol_version
        if version not in SUPPORTED_VERSIONS:
            supported = ", ".join(SUPPORTED_VERSIONS)
            reason = f"Unsupported MCP-Protocol-Version {version!r}; supported: {supported}"
            raise HttpError(400, reason, request_id=request_id)

    def do_DELETE(self):
        self.answer(self.delete)

    def delete(self):
        """The client ends its session."""
        self.guard_door()
        session_id = self.header("Mcp-Session-Id")
        if session_id is None:
            raise HttpError(400, "Bad request: DELETE needs the Mcp-Session-Id header")
        if not self.server.sessions.end(session_id):
            raise HttpError(404, "Session not found: it ended, expired or never existed")
        self.send_body(204)

    def do_GET(self):
        self.answer(self.refuse_method)

    do_PUT = do_PATCH = do_GET

    def refuse_method(self):
        self.guard_door()
        if self.command == "GET":
            reason = "Method not allowed: this server sends nothing unasked, so it offers no GET stream"
        else:
            reason = "Method not allowed: send JSON-RPC with POST, or end a session with DELETE"
        self.send_json(405, error_response(None, INVALID_REQUEST, reason), {"Allow": "POST, DELETE"})

    def header(self, name: str) -> str | None:
        """A header's value without the spaces around it; None if it is missing."""
        value = self.headers.get(name)
        return None if value is None else value.strip()

    def send_json(self, status: int, payload, headers: dict | None = None):
        self.send_body(status, json.dumps(payload).encode(), {"Content-Type": "application/json", **(headers or {})})

    # region stream
    def send_stream(self, messages: list[dict], headers: dict):
        """An SSE stream: one event per message. Over HTTP/1.1 it goes out in chunks,
        and the empty chunk at the end closes the stream but not the connection.
        (Chapter 7 sends progress notifications ahead of the response.)"""
        self.answered = True
        self.send_response(200)
        # X-Accel-Buffering: no asks proxies such as nginx to pass each event on at once.
        stream_headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        chunked = self.request_version == "HTTP/1.1"  # an HTTP/1.0 client reads until the connection closes
        if chunked:
            stream_headers["Transfer-Encoding"] = "chunked"
        else:
            self.close_connection = True
        for name, value in {**stream_headers, **headers}.items():
            self.send_header(name, value)
        self.end_headers()
        for message in messages:
            self.write_event(f"event: message\ndata: {json.dumps(message)}\n\n".encode(), chunked)
        if chunked:
            self.write_event(b"", chunked)  # the empty chunk: the stream ends, the connection stays

    def write_event(self, data: bytes, chunked: bool):
        if chunked:
            data = b"%x\r\n%s\r\n" % (len(data), data)  # the chunk's size in hex, then the chunk
        self.wfile.write(data)
        self.wfile.flush()  # each event leaves at once, not when a buffer fills
    # endregion stream

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


# region wants-stream
def wants_stream(message: dict) -> bool:
    """Answer with SSE when the client asked for progress: only a stream can carry
    notifications before the response. Everything else gets plain JSON."""
    meta = message.get("params", {}).get("_meta")
    return isinstance(meta, dict) and "progressToken" in meta
# endregion wants-stream
