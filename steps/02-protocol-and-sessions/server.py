#!/usr/bin/env python3
"""Step 2: the protocol done properly, over Streamable HTTP with sessions.

protocol.py is the core and knows no transport; http_transport.py carries it over
HTTP; tools.py holds the tools.
Run it:  python3 server.py --port 3000   then replay the wire/ scripts with curl.
"""
import argparse
import logging

from http_transport import McpHttpServer
from protocol import Server

log = logging.getLogger("step2")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    parser.add_argument("--port", type=int, default=3000, help="port, 0 for any free one (default: %(default)s)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")  # stderr
    http_server = McpHttpServer(args.host, args.port, Server())
    log.info("listening on http://%s:%d/mcp", args.host, http_server.server_port)
    try:
        http_server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
