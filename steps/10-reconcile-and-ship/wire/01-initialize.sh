#!/usr/bin/env bash
# The handshake opens a session: the answer carries an Mcp-Session-Id header that the
# client sends with every later request. The server agrees on a version it supports.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' <<'JSON'
{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "curl", "version": "8"}}}
JSON
