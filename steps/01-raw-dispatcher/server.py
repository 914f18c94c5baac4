#!/usr/bin/env python3
"""Step 1: MCP is JSON-RPC 2.0 over one HTTP endpoint.

One POST /mcp carries one JSON message. A message with an "id" is a request and
gets a response; one without is a notification and gets 202 with an empty body.
Run it:  python3 server.py --port 3000   then replay the wire/ scripts with curl.
"""
import argparse
import errno
import json
import logging
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

log = logging.getLogger("step1")
SERVER_INFO = {"name": "vault-mcp", "version": "0.1.0"}

# region tools
TOOLS = [
    {
        "name": "ping",
        "description": "Answer 'pong'. Proves the round trip works.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "echo",
        "description": "Return the given text unchanged.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
]


def call_tool(name, arguments):
    """Run a tool. Whatever goes wrong here is reported to the model, not the client."""
    if name == "ping":
        return text_result("pong")
    if name == "echo":
        return text_result(str(arguments.get("text", "")))
    return text_result(f"Unknown tool: {name!r}. Call tools/list to see the tools.", error=True)


def text_result(text, error=False):
    return {"content": [{"type": "text", "text": text}], "isError": error}
# endregion tools


# region dispatch
def handle(message):
    """Answer one JSON-RPC message: a response dict, or None when nothing may answer it."""
    if "id" not in message or "method" not in message:
        return None  # a notification (no id) or a response the client sends back (no method)
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        # A shortcut: echoing the client's version. Step 2 negotiates for real.
        result = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": SERVER_INFO,
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = call_tool(params.get("name"), params.get("arguments") or {})
    else:
        return error_response(message["id"], -32601, f"Method not found: {method}")
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def error_response(request_id, code, text):
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}
# endregion dispatch


# region http
class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/mcp":
            return self.send_text(404, "Not found: the MCP endpoint is POST /mcp\n")
        try:
            length = max(0, int(self.headers.get("Content-Length") or 0))
            message = json.loads(self.rfile.read(length))
        except (ValueError, RecursionError):  # a bad length, bad JSON, not UTF-8, nested too deep
            return self.send_json(400, error_response(None, -32700, "Parse error: body is not JSON"))
        if not isinstance(message, dict):
            return self.send_json(400, error_response(None, -32600, "Invalid request: expected one JSON object"))
        try:
            response = handle(message)
        except Exception:  # a bug must not kill the server or leave the client waiting
            log.exception("failed to handle %r", message)
            response = error_response(message.get("id"), -32603, "Internal error")
        if response is None:
            return self.send_text(202, "")
        self.send_json(200, response)
    # endregion http

    def do_GET(self):
        self.send_text(405, "Method not allowed: send JSON-RPC with POST /mcp\n", Allow="POST")

    do_PUT = do_DELETE = do_PATCH = do_GET

    def send_json(self, status, payload):
        self.send_text(status, json.dumps(payload), "application/json")

    def send_text(self, status, text, content_type="text/plain; charset=utf-8", **headers):
        data = text.encode()
        self.send_response(status)
        if data:
            self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, fmt, *args):  # the default writes to stderr unformatted
        log.info("%s %s", self.address_string(), fmt % args)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    parser.add_argument("--port", type=int, default=3000, help="port, 0 for any free one (default: %(default)s)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")  # stderr
    try:
        server = ThreadingHTTPServer((args.host, args.port), Handler)
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        sys.exit(f"Port {args.port} is in use: stop the server running there (Ctrl-C in its terminal) "
                 f"or choose another port with --port.")
    log.info("listening on http://%s:%d/mcp", args.host, server.server_port)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
