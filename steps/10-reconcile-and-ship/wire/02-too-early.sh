#!/usr/bin/env bash
# Work before the handshake is finished: the client has not sent notifications/initialized
# yet, so the server refuses everything but ping.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
JSON
