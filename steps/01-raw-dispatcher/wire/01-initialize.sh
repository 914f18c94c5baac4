#!/usr/bin/env bash
# The client opens the conversation: its protocol version, its capabilities, who it is.
# The server answers with a version, its own capabilities and who it is.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' <<'JSON'
{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "curl", "version": "8"}}}
JSON
