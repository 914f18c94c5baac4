#!/usr/bin/env python3
"""Step 4: tools declared with schemas, untrusted paths, and notes as resources.

protocol.py is the core and knows no transport; http_transport.py and
stdio_transport.py carry it; tools.py and resources.py offer the vault's notes
through vault.py, the one place a path becomes a file; schema.py checks tool
arguments; limits.py bounds what one HTTP client may hold.
Run it:  python3 server.py --vault PATH --port 3000   (HTTP)
         python3 server.py --vault PATH --stdio       (for clients that start the server)
"""
import argparse
import errno
import logging
import sys
from pathlib import Path

from http_transport import McpHttpServer
from limits import Limits
from protocol import Server
from scratch_vault import DEFAULT_VAULT, scratch_vault
from stdio_transport import serve_stdio
from vault import Vault

log = logging.getLogger("step4")


def main():
    args = parse_args()
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(message)s")  # stderr
    try:
        vault = Vault(args.vault or scratch_vault())
    except OSError as error:
        sys.exit(f"Cannot open the vault {args.vault or DEFAULT_VAULT}: {error.strerror or error}. Give a folder with --vault.")
    log.info("vault: %s", vault.root)
    try:
        if args.stdio:
            serve_stdio(Server(vault))
        else:
            serve_http(args, Server(vault))
    except KeyboardInterrupt:
        pass


def serve_http(args, core: Server):
    limits = Limits(
        max_connections=args.max_connections,
        request_seconds=args.request_timeout,
        max_sessions=args.max_sessions,
        session_idle_seconds=args.session_timeout,
    )
    try:
        http_server = McpHttpServer(args.host, args.port, core, limits)
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        sys.exit(f"Port {args.port} is in use: stop the server running there (Ctrl-C in its terminal) "
                 f"or choose another port with --port.")
    log.info("listening on http://%s:%d/mcp", args.host, http_server.server_port)
    http_server.serve_forever()


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    parser.add_argument("--port", type=int, default=3000, help="port, 0 for any free one (default: %(default)s)")
    parser.add_argument("--stdio", action="store_true", help="speak over stdin and stdout instead of HTTP")
    parser.add_argument("--vault", type=Path,
                        help=f"the Obsidian vault, a folder of notes (default: {DEFAULT_VAULT}, "
                             "a copy of the sample vault, made when missing)")
    limits = parser.add_argument_group("limits (HTTP)")
    default = Limits()
    limits.add_argument("--max-connections", type=int, default=default.max_connections, metavar="N",
                        help="connections served at once; more get 503 (default: %(default)s)")
    limits.add_argument("--request-timeout", type=float, default=default.request_seconds, metavar="SECONDS",
                        help="to send a whole request, or to stay idle between two (default: %(default)s)")
    limits.add_argument("--max-sessions", type=int, default=default.max_sessions, metavar="N",
                        help="sessions kept; the least recently used makes way (default: %(default)s)")
    limits.add_argument("--session-timeout", type=float, default=default.session_idle_seconds, metavar="SECONDS",
                        help="an idle session expires after this (default: %(default)s)")
    parser.add_argument("--log-level", choices=["debug", "info", "warning"], default="info",
                        help="how much the log on stderr says; warning leaves out the line per request "
                             "(default: %(default)s)")
    return parser.parse_args()


if __name__ == "__main__":
    main()
