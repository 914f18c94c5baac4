#!/usr/bin/env bash
# A tool that was never listed: the client should not have asked, so this is a protocol
# error (-32602, invalid params), as the specification does it.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "delete_everything", "arguments": {}}}
JSON
