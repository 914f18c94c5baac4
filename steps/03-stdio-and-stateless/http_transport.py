"""Streamable HTTP around the protocol core: one endpoint, /mcp.

Everything here is about HTTP: which requests to refuse before reading them, which
era and session a message belongs to, and whether a response goes out as JSON or
as an SSE stream. The protocol itself lives in protocol.py.
"""
import base64
import binascii
import json
import logging
import re
import secrets
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from protocol import HANDSHAKE_VERSIONS, HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST
from protocol import META_VERSION, METHOD_NOT_FOUND, PARSE_ERROR, SUPPORTED_VERSIONS, UNSUPPORTED_VERSION
from protocol import ProtocolError, Server, Session, error_response, id_of, is_stateless, kind_of

log = logging.getLogger("http")

MAX_BODY = 4 * 1024 * 1024  # a JSON-RPC message is small; anything bigger is refused unread
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

    def __init__(self, status: int, message: str, code: int = INVALID_REQUEST, request_id=None, data=None):
        super().__init__(message)
        self.status, self.message, self.code, self.request_id, self.data = status, message, code, request_id, data


# region sessions
class Sessions:
    """Live sessions by id. Handler threads share it, hence the lock."""

    def __init__(self):
        self._by_id: dict[str, Session] = {}
        self._lock = threading.Lock()

    def start(self, session: Session) -> str:
        session_id = secrets.token_urlsafe(32)  # unguessable, visible ASCII only
        with self._lock:
            self._by_id[session_id] = session
        return session_id

    def get(self, session_id: str) -> Session | None:
        with self._lock:
            return self._by_id.get(session_id)

    def end(self, session_id: str) -> bool:
        with self._lock:
            return self._by_id.pop(session_id, None) is not None
# endregion sessions


class McpHttpServer(ThreadingHTTPServer):
    def __init__(self, host: str, port: int, core: Server):
        if ":" in host:  # an IPv6 address such as ::1
            self.address_family = socket.AF_INET6
        super().__init__((host, port), McpHandler)
        self.core, self.sessions = core, Sessions()
        self.allowed_hosts = LOCAL_HOSTS | {host}


class McpHandler(BaseHTTPRequestHandler):
    server: McpHttpServer
    timeout = 30  # seconds a client may stay silent before its connection is closed

    # region post
    def do_POST(self):
        self.answer(self.post)

    def post(self):
        self.guard_door()
        self.require_headers()
        message = self.read_message()
        kind = kind_of_or_400(message)
        if self.stateless_era() or is_stateless(message):
            return self.post_stateless(message, kind)
        # A handshake version in the header, or none: the session's version applies.
        session, is_new = self.session_for(message)
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

    def post_stateless(self, message, kind: str):
        """2026-07-28: no session, and the routing headers must agree with the body."""
        version = self.headers.get("MCP-Protocol-Version")
        if version is not None and version not in SUPPORTED_VERSIONS:
            data = {"supported": list(SUPPORTED_VERSIONS), "requested": version}
            reason = f"Unsupported protocol version {version!r}"
            raise HttpError(400, reason, UNSUPPORTED_VERSION, id_of(message), data)
        if kind == "response":
            raise HttpError(400, "A 2026-07-28 client sends no responses: the server asks it nothing")
        if kind == "request":
            check_routing_headers(message, self.headers)
        response = self.server.core.handle(message, None)
        if kind != "request":
            return self.send_body(202)
        status = STATELESS_STATUS.get(response.get("error", {}).get("code"), 200)
        if status == 200 and wants_stream(message):
            self.send_stream([response], {})
        else:
            self.send_json(status, response)

    def answer(self, handle):
        """Run a handler so that every failure still gets an HTTP answer."""
        try:
            handle()
        except HttpError as error:
            self.send_json(error.status, error_response(error.request_id, error.code, error.message, error.data))
        except (BrokenPipeError, ConnectionResetError):
            log.info("the client hung up before the answer")
        except Exception:
            log.exception("failed to answer %s %s", self.command, self.path)
            self.send_json(500, error_response(None, INTERNAL_ERROR, "Internal error; the server log has details"))
    # endregion post

    # region door
    def guard_door(self):
        """Refuse what must not reach the protocol at all."""
        if urlsplit(self.path).path != "/mcp":
            raise HttpError(404, "Not found: the MCP endpoint is /mcp")
        # A web page can make your browser send requests to 127.0.0.1. The browser
        # names the page in Origin; a request with no Origin (DNS rebinding from an
        # old browser, say) still names the site it thinks it calls in Host.
        hosts, origins = self.headers.get_all("Host", []), self.headers.get_all("Origin", [])
        if len(hosts) != 1 or host_of(hosts[0]) not in self.server.allowed_hosts:
            raise HttpError(403, f"Forbidden: Host {', '.join(hosts)!r} is not this local server")
        if len(origins) > 1 or (origins and origin_host(origins[0]) not in self.server.allowed_hosts):
            raise HttpError(403, f"Forbidden: Origin {', '.join(origins)!r} may not call this server")

    def require_headers(self):
        accepted = {part.split(";")[0].strip() for part in self.headers.get("Accept", "").split(",")}
        takes_json = accepted & {"application/json", "application/*", "*/*"}
        takes_sse = accepted & {"text/event-stream", "text/*", "*/*"}
        if not (takes_json and takes_sse):
            raise HttpError(406, "Not acceptable: Accept must list application/json and text/event-stream")
        if self.headers.get_content_type() != "application/json":
            raise HttpError(415, "Unsupported media type: send Content-Type: application/json")

    def read_message(self):
        length = self.headers.get("Content-Length")
        if length is None:
            raise HttpError(411, "Length required: send Content-Length")
        if not (length.isascii() and length.isdigit()):
            raise HttpError(400, "Bad Content-Length")
        if int(length) > MAX_BODY:
            raise HttpError(413, f"Payload too large: the limit is {MAX_BODY} bytes")
        try:
            return json.loads(self.rfile.read(int(length)).decode("utf-8"))
        except RecursionError:  # the parser recurses once per [ or {
            raise HttpError(400, "Parse error: the JSON is nested too deeply", PARSE_ERROR) from None
        except ValueError:  # bad JSON, or bytes that are not UTF-8
            raise HttpError(400, "Parse error: the body is not JSON", PARSE_ERROR) from None
    # endregion door

    # region session-routing
    def session_for(self, message) -> tuple[Session, bool]:
        """The session a message belongs to, and whether it is a new one."""
        session_id = self.headers.get("Mcp-Session-Id")
        if session_id is None:
            if message.get("method") == "initialize" and "id" in message:
                return Session(), True
            reason = "Bad request: Mcp-Session-Id header required (initialize first)"
            raise HttpError(400, reason, request_id=id_of(message))
        session = self.server.sessions.get(session_id)
        if session is None:
            reason = "Session not found: it ended or never existed; initialize again"
            raise HttpError(404, reason, request_id=id_of(message))
        return session, False
    # endregion session-routing

    # region other-methods
    def do_DELETE(self):
        self.answer(self.delete)

    def delete(self):
        """The client ends its session (handshake era only)."""
        self.guard_door()
        if self.stateless_era():
            return self.refuse_method()
        session_id = self.headers.get("Mcp-Session-Id")
        if session_id is None:
            raise HttpError(400, "Bad request: DELETE needs the Mcp-Session-Id header")
        if not self.server.sessions.end(session_id):
            raise HttpError(404, "Session not found: it ended or never existed")
        self.send_body(204)

    def do_GET(self):
        self.answer(self.refuse_method)

    do_PUT = do_PATCH = do_GET

    def refuse_method(self):
        self.guard_door()
        allowed = "POST, DELETE"
        if self.stateless_era():
            allowed, reason = "POST", "Method not allowed: in 2026-07-28 every request is a POST"
        elif self.command == "GET":
            reason = "Method not allowed: this server sends nothing unasked, so it offers no GET stream"
        else:
            reason = "Method not allowed: send JSON-RPC with POST, or end a session with DELETE"
        self.send_json(405, error_response(None, INVALID_REQUEST, reason), {"Allow": allowed})

    def stateless_era(self) -> bool:
        """A version header that is not a handshake one marks the 2026-07-28 era."""
        version = self.headers.get("MCP-Protocol-Version")
        return version is not None and version not in HANDSHAKE_VERSIONS
    # endregion other-methods

    # region responses
    def send_json(self, status: int, payload: dict, headers: dict | None = None):
        self.send_body(status, json.dumps(payload).encode(), {"Content-Type": "application/json", **(headers or {})})

    def send_stream(self, messages: list[dict], headers: dict):
        """An SSE stream: one event per message; closing the connection ends it.
        (Chapter 7 sends progress notifications ahead of the response.)"""
        self.send_response(200)
        # X-Accel-Buffering: no asks proxies such as nginx to pass each event on at once.
        stream_headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        for name, value in {**stream_headers, **headers}.items():
            self.send_header(name, value)
        self.end_headers()
        for message in messages:
            self.wfile.write(f"event: message\ndata: {json.dumps(message)}\n\n".encode())
            self.wfile.flush()

    def send_body(self, status: int, body: bytes = b"", headers: dict | None = None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if status != 204:  # "No Content" carries no body, so no length either
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    # endregion responses

    def log_message(self, fmt, *args):
        log.info("%s %s", self.address_string(), fmt % args)


def host_of(authority: str) -> str | None:
    """'localhost:3000' -> 'localhost', '[::1]:3000' -> '::1'; None unless it is a plain host[:port]."""
    match = AUTHORITY.fullmatch(authority.strip())
    return match.group(1).strip("[]").lower() if match else None


def origin_host(origin: str) -> str | None:
    """'http://localhost:5173' -> 'localhost'; None for 'null' or anything else odd."""
    scheme, _, authority = origin.strip().partition("://")
    return host_of(authority) if scheme.lower() in ("http", "https") else None


def kind_of_or_400(message) -> str:
    """Validate before routing: a malformed message is refused with 400, before any session is looked up."""
    try:
        return kind_of(message)
    except ProtocolError as error:
        raise HttpError(400, error.message, error.code, id_of(message)) from None


# region routing-headers
def check_routing_headers(message: dict, headers) -> None:
    """MCP-Protocol-Version, Mcp-Method and (for tools/call) Mcp-Name repeat what the
    body says, so that proxies and load balancers can route without parsing JSON.
    They must agree with the body exactly."""
    params = message.get("params", {})
    meta = params.get("_meta")
    if not isinstance(meta, dict) or not isinstance(meta.get(META_VERSION), str):
        return  # the core answers a missing or broken _meta with a clearer error
    expected = {"MCP-Protocol-Version": meta[META_VERSION], "Mcp-Method": message["method"]}
    if message["method"] == "tools/call":
        expected["Mcp-Name"] = params.get("name")
    for name, value in expected.items():
        if not isinstance(value, str):
            continue  # the body itself is wrong: the core says so more clearly
        sent = [v.strip(" \t") for v in headers.get_all(name) or []]
        if not header_matches(name, sent, value):
            shown = ", ".join(json.dumps(v) for v in sent) or "missing"
            reason = f"Header mismatch: {name} is {shown}; the body says {json.dumps(value)}"
            raise HttpError(400, reason, HEADER_MISMATCH, id_of(message))


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
# endregion routing-headers


def wants_stream(message: dict) -> bool:
    """Answer with SSE when the client asked for progress: only a stream can carry
    notifications before the response. Everything else gets plain JSON."""
    meta = message.get("params", {}).get("_meta")
    return isinstance(meta, dict) and "progressToken" in meta
