"""make bench: the smallest Streamable HTTP server the official MCP Python SDK makes.

One tool, echo, as in step 3. It runs inside .venv-interop, where the SDK is
installed, and is started by tests/bench.py. Like step 3 with --port 0, it prints
"listening on http://127.0.0.1:PORT/mcp" on stderr once it accepts connections.
"""
import argparse
import socket
import sys

import uvicorn
from mcp.server import MCPServer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port, 0 for any free one (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="answer with JSON, not with an SSE stream (the default)")
    args = parser.parse_args()

    server = MCPServer("bench-sdk")

    # structured_output=False: a text block only, like step 3's echo (else the SDK
    # would add structuredContent and an outputSchema for the str it returns).
    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    # What server.run("streamable-http", json_response=...) does, except that we bind
    # the socket ourselves: port 0 then gets a free port we can print.
    app = server.streamable_http_app(json_response=args.json)
    # IPPROTO_TCP, not the default 0: asyncio sets TCP_NODELAY only on sockets that
    # say they are TCP, and without it every answer on a kept-alive connection waits
    # ~40 ms for the client's delayed ACK (Nagle's algorithm).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)  # from here on connections wait in the backlog until uvicorn accepts them
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level=server.settings.log_level.lower())).run(sockets=[sock])


if __name__ == "__main__":
    main()
