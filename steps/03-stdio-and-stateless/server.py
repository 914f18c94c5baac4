#!/usr/bin/env python3
"""Step 3: one protocol core, two transports (HTTP and stdio), two protocol eras.

protocol.py is the core and knows no transport; http_transport.py and
stdio_transport.py carry it; tools.py holds the tools.
Run it:  python3 server.py --port 3000   (HTTP; replay the wire/ scripts with curl)
         python3 server.py --stdio       (for clients that start the server themselves)
"""
import argparse
import logging

from http_transport import McpHttpServer
from protocol import Server
from stdio_transport import serve_stdio

log = logging.getLogger("step3")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    parser.add_argument("--port", type=int, default=3000, help="port, 0 for any free one (default: %(default)s)")
    parser.add_argument("--stdio", action="store_true", help="speak over stdin and stdout instead of HTTP")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")  # stderr
    try:
        if args.stdio:
            serve_stdio(Server())
        else:
            http_server = McpHttpServer(args.host, args.port, Server())
            log.info("listening on http://%s:%d/mcp", args.host, http_server.server_port)
            http_server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
