#!/usr/bin/env bash
# After initialize every request names its protocol version in a header. A version the
# server does not speak is refused with 400. (Without the header it assumes 2025-03-26.)
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 1999-01-01' <<'JSON'
{"jsonrpc": "2.0", "id": 17, "method": "tools/list"}
JSON
