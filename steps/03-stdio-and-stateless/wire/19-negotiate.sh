#!/usr/bin/env bash
# Version negotiation: a client asking for a version the server does not speak gets the
# server's newest instead, and decides whether it can go on. (A new session starts here.)
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' <<'JSON'
{"jsonrpc": "2.0", "id": 22, "method": "initialize", "params": {"protocolVersion": "2099-01-01", "capabilities": {}, "clientInfo": {"name": "curl", "version": "8"}}}
JSON
