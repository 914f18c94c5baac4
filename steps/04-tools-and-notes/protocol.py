"""The protocol core: one JSON-RPC message in, at most one message out.

It knows nothing about HTTP or stdio. A transport parses bytes into a message,
decides its era, and calls Server.handle: with the client's Session for the
handshake era (2025-11-25 and before), with None for the stateless era
(2026-07-28), where every request stands alone.
"""
import json
import logging
import time
from dataclasses import dataclass

from completion import complete_path
from request_log import log_request
from resources import TEMPLATE, list_resources, read_resource
from tools import TOOLS, call_tool
from vault import InvalidCursor, NoteNotFound, Vault, VaultError

log = logging.getLogger("protocol")

HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
BATCH_VERSIONS = ("2025-03-26",)  # the one revision whose servers must accept JSON-RPC batches
STATELESS_VERSIONS = ("2026-07-28",)
SUPPORTED_VERSIONS = STATELESS_VERSIONS + HANDSHAKE_VERSIONS

# The keys a 2026-07-28 request and result carry in their _meta.
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

SERVER_INFO = {"name": "vault-mcp", "title": "Obsidian vault", "version": "0.4.0"}
CAPABILITIES = {"tools": {"listChanged": False}, "resources": {"subscribe": False, "listChanged": False},
                "completions": {}}
INSTRUCTIONS = (
    "This server reads the user's Obsidian vault, a folder of Markdown notes. "
    "list_notes gives the notes' paths; get_note reads one."
)
MAX_BATCH = 100  # messages in one batch; each may cost a tool call
# 2026-07-28 lets a result say how long a client may cache it. The tools and the
# template are the same for everyone for as long as the server runs; the notes are
# the user's own, and may change at any moment.
# region cache-hints
CACHE_HINTS = {
    "server/discover": {"ttlMs": 300_000, "cacheScope": "public"},
    "tools/list": {"ttlMs": 300_000, "cacheScope": "public"},
    "resources/templates/list": {"ttlMs": 300_000, "cacheScope": "public"},
    "resources/list": {"ttlMs": 0, "cacheScope": "private"},
    "resources/read": {"ttlMs": 0, "cacheScope": "private"},
}
# endregion cache-hints

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002  # 2025-11-25; 2026-07-28 uses INVALID_PARAMS instead
HEADER_MISMATCH = -32020  # 2026-07-28, HTTP only: a routing header disagrees with the body
UNSUPPORTED_VERSION = -32022  # 2026-07-28: data says which versions would work


class ProtocolError(Exception):
    """A failure the client must hear about, as a JSON-RPC error."""

    def __init__(self, code: int, message: str, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def error_response(request_id, code: int, message: str, data=None) -> dict:
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def parse_json(data: bytes):
    """Bytes off the wire to a message; a PARSE_ERROR for anything that is not JSON."""
    try:
        return json.loads(data.decode("utf-8"), parse_constant=refuse_constant)
    except RecursionError:  # the parser recurses once per [ or {
        raise ProtocolError(PARSE_ERROR, "Parse error: the JSON is nested too deeply") from None
    except ValueError:  # bad JSON, bytes that are not UTF-8, NaN or Infinity
        raise ProtocolError(PARSE_ERROR, "Parse error: the message is not JSON") from None


def refuse_constant(name: str):
    # Python's json reads NaN, Infinity and -Infinity, which JSON does not have.
    raise ValueError(f"{name} is not JSON")


def kind_of(message) -> str:
    """'request', 'notification' or 'response'; a ProtocolError for anything else."""
    if isinstance(message, list):
        raise ProtocolError(INVALID_REQUEST, "Batches are not supported: send one JSON-RPC message at a time")
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise ProtocolError(INVALID_REQUEST, 'Expected a JSON-RPC 2.0 message: an object with "jsonrpc": "2.0"')
    if "method" not in message:
        if "id" in message and ("result" in message or "error" in message):
            return "response"
        raise ProtocolError(INVALID_REQUEST, 'A request needs a "method"; a response needs "result" or "error"')
    if not isinstance(message["method"], str):
        raise ProtocolError(INVALID_REQUEST, '"method" must be a string')
    if "id" in message and not valid_id(message["id"]):
        raise ProtocolError(INVALID_REQUEST, '"id" must be a string or an integer')
    if not isinstance(message.get("params", {}), dict):
        raise ProtocolError(INVALID_PARAMS, '"params" must be an object')
    return "request" if "id" in message else "notification"


def valid_id(value) -> bool:
    # MCP forbids null ids; bool is excluded because Python counts it as an int.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def is_stateless(message) -> bool:
    """A 2026-07-28 request names its version in params._meta; a handshake-era
    request never does (its _meta, if any, holds only a progressToken)."""
    if not isinstance(message, dict):
        return False
    if message.get("method") == "server/discover":
        return True  # a 2026-07-28 method: answer it in that era, even without _meta
    params = message.get("params")
    if not isinstance(params, dict) or "_meta" not in params:
        return False
    meta = params["_meta"]
    return not isinstance(meta, dict) or META_VERSION in meta  # a broken _meta: the new era's error


def id_of(message):
    """The id to answer with: the request's own when it is valid, else null."""
    if isinstance(message, dict) and valid_id(message.get("id")):
        return message["id"]
    return None


@dataclass
class Session:
    """What the server remembers about one client between its messages."""

    protocol_version: str | None = None  # agreed by initialize
    initialized: bool = False  # the client has sent notifications/initialized


class Server:
    def __init__(self, vault: Vault):
        self.vault = vault

    def handle(self, message, session: Session | None) -> dict | None:
        """Answer one message: a response, or None when nothing may be sent back.
        Here, where the outcome is known whatever the transport, each answer is logged."""
        started = time.monotonic()
        response = self.answer(message, session)
        log_request(message, response, time.monotonic() - started)
        return response

    def answer(self, message, session: Session | None) -> dict | None:
        """The response to one message, or None when nothing may be sent back.
        session is None for a stateless (2026-07-28) message."""
        try:
            kind = kind_of(message)
            if kind == "notification" and session is not None:
                self.on_notification(message, session)
            if kind != "request":
                return None
            method, params = message["method"], message.get("params", {})
            if session is None:
                result = self.on_stateless_request(method, params)
            else:
                result = self.on_request(method, params, session)
            return {"jsonrpc": "2.0", "id": message["id"], "result": result}
        except ProtocolError as error:
            return error_response(id_of(message), error.code, error.message, error.data)
        except Exception:
            # Not the message itself: it may hold a note's text. The request line
            # that follows names the method, the tool and the path.
            log.exception("failed to answer a request")
            return error_response(id_of(message), INTERNAL_ERROR, "Internal error; the server log has details")

    def handle_batch(self, messages: list, session: Session) -> list[dict]:
        """2025-03-26 let a client send an array of messages and get an array of
        answers; 2025-06-18 took batches out again. So they are accepted only where
        that revision was agreed, and never before the handshake."""
        if session.protocol_version not in BATCH_VERSIONS:
            raise ProtocolError(INVALID_REQUEST, "Batches are not supported: only a 2025-03-26 session may send them")
        if not 0 < len(messages) <= MAX_BATCH:
            raise ProtocolError(INVALID_REQUEST, f"A batch holds 1 to {MAX_BATCH} messages")
        responses = [self.handle(message, session) for message in messages]
        return [response for response in responses if response is not None]

    def on_request(self, method: str, params: dict, session: Session) -> dict:
        if method == "initialize":
            return self.initialize(params, session)
        if method == "ping":
            return {}  # allowed at any time, even before the handshake
        handler = self.methods().get(method)
        if handler is None:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}")
        if not session.initialized:
            raise ProtocolError(
                INVALID_REQUEST, f"{method} before the handshake: send initialize, then notifications/initialized"
            )
        return handler(params)

    def on_notification(self, message: dict, session: Session) -> None:
        if message["method"] == "notifications/initialized" and session.protocol_version:
            session.initialized = True
        # Anything else (cancelled, progress, unknown) needs no action from this server.

    # region stateless
    def on_stateless_request(self, method: str, params: dict) -> dict:
        """2026-07-28: no handshake, no session; each request says who it is."""
        check_meta(params.get("_meta"))
        handler = {"server/discover": self.discover, **self.methods()}.get(method)
        if handler is None:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}")
        # region stateless-not-found
        try:
            result = {"resultType": "complete", **handler(params), **CACHE_HINTS.get(method, {})}
        except ProtocolError as error:
            if error.code == RESOURCE_NOT_FOUND:  # this era has no code of its own for it
                raise ProtocolError(INVALID_PARAMS, error.message, error.data) from None
            raise
        # endregion stateless-not-found
        result.setdefault("_meta", {})[META_SERVER_INFO] = SERVER_INFO
        return result

    def discover(self, params: dict) -> dict:
        return {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS,
        }
    # endregion stateless

    def initialize(self, params: dict, session: Session) -> dict:
        if session.protocol_version is not None:
            raise ProtocolError(INVALID_REQUEST, "This session is already initialized")
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise ProtocolError(INVALID_PARAMS, "initialize needs params.protocolVersion, a string")
        if not isinstance(params.get("capabilities"), dict) or not isinstance(params.get("clientInfo"), dict):
            raise ProtocolError(INVALID_PARAMS, "initialize needs params.capabilities and params.clientInfo, objects")
        # The client's version if we speak it, else our newest: the client decides whether to go on.
        session.protocol_version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[0]
        return {
            "protocolVersion": session.protocol_version,
            "capabilities": CAPABILITIES,
            "serverInfo": SERVER_INFO,
            "instructions": INSTRUCTIONS,
        }

    def methods(self) -> dict:
        """The methods both eras share: each takes params and returns a result."""
        return {
            "tools/list": self.list_tools,
            "tools/call": self.call_tool,
            "resources/list": self.list_resources,
            "resources/templates/list": self.list_templates,
            "resources/read": self.read_resource,
            "completion/complete": self.complete,
        }

    def list_tools(self, params: dict) -> dict:
        return {"tools": [tool.declaration() for tool in TOOLS.values()]}

    def call_tool(self, params: dict) -> dict:
        name = params.get("name")
        if not isinstance(name, str):
            raise ProtocolError(INVALID_PARAMS, "tools/call needs params.name, a string")
        if name not in TOOLS:
            # The client should only call tools it was told about: a protocol error.
            raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name!r}")
        return call_tool(TOOLS[name], params.get("arguments"), self.vault)

    def list_resources(self, params: dict) -> dict:
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise ProtocolError(INVALID_PARAMS, "params.cursor must be a string from nextCursor")
        try:
            return list_resources(self.vault, cursor)
        except InvalidCursor as error:
            raise ProtocolError(INVALID_PARAMS, str(error)) from None

    def list_templates(self, params: dict) -> dict:
        return {"resourceTemplates": [TEMPLATE]}

    # region resource-methods
    def read_resource(self, params: dict) -> dict:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise ProtocolError(INVALID_PARAMS, "resources/read needs params.uri, a string")
        try:
            return read_resource(self.vault, uri)
        except NoteNotFound as error:
            raise ProtocolError(RESOURCE_NOT_FOUND, str(error), {"uri": uri}) from None
        except VaultError as error:  # outside the vault, too large, not a note
            raise ProtocolError(INVALID_PARAMS, str(error), {"uri": uri}) from None
    # endregion resource-methods

    # region complete
    def complete(self, params: dict) -> dict:
        """completion/complete: paths for the one argument this server completes, the path
        of the note template; anything else is refused, saying what can be completed."""
        ref, argument = params.get("ref"), params.get("argument")
        if not isinstance(ref, dict) or ref.get("type") not in ("ref/resource", "ref/prompt"):
            raise ProtocolError(INVALID_PARAMS, 'completion/complete needs params.ref, {"type": "ref/resource", '
                                                f'"uri": "{TEMPLATE["uriTemplate"]}"}}')
        if ref["type"] == "ref/prompt" or ref.get("uri") != TEMPLATE["uriTemplate"]:
            raise ProtocolError(INVALID_PARAMS, f"Only the path of {TEMPLATE['uriTemplate']} can be completed here")
        if not isinstance(argument, dict) or argument.get("name") != "path":
            raise ProtocolError(INVALID_PARAMS, 'params.argument must be {"name": "path", "value": ...}')
        value = argument.get("value")
        if not isinstance(value, str) or len(value) > 1024:
            raise ProtocolError(INVALID_PARAMS, "params.argument.value must be a string of at most 1024 characters")
        return complete_path(self.vault, value)
    # endregion complete


# region meta
def check_meta(meta) -> None:
    """A stateless request must name its version and the client's capabilities."""
    if not (isinstance(meta, dict) and isinstance(meta.get(META_VERSION), str)
            and isinstance(meta.get(META_CAPABILITIES), dict)):
        raise ProtocolError(
            INVALID_PARAMS, f"params._meta needs {META_VERSION!r} (a string) and {META_CAPABILITIES!r} (an object)"
        )
    requested = meta[META_VERSION]
    if requested not in STATELESS_VERSIONS:
        reason = f"Unsupported protocol version {requested!r}"
        if requested in HANDSHAKE_VERSIONS:
            reason = f"{requested} is a handshake-era version: send initialize (without _meta) to use it"
        raise ProtocolError(UNSUPPORTED_VERSION, reason, {"supported": list(SUPPORTED_VERSIONS), "requested": requested})
# endregion meta
