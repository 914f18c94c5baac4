#!/usr/bin/env bash
# Known tools with wrong arguments: each is checked against the tool's input schema
# before the tool runs, and comes back as a tool error naming the field.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "list_notes", "arguments": {"limit": "ten", "colour": "blue"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 70, "method": "tools/call", "params": {"name": "get_note", "arguments": {}}}
JSON
