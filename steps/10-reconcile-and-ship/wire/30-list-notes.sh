#!/usr/bin/env bash
# The vault's notes, a page at a time. (A new session starts here: the last one ended
# in script 20.) The first page ends with nextCursor; sent back as cursor, it gives the
# page after. The cursor names the last path of the page before, so it is the same on
# every run and survives notes being added in between.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' <<'JSON'
{"jsonrpc": "2.0", "id": 40, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "curl", "version": "8"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "method": "notifications/initialized"}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "list_notes", "arguments": {"folder": "Bread", "limit": 4}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 42, "method": "tools/call", "params": {"name": "list_notes", "arguments": {"folder": "Bread", "limit": 4, "cursor": "YWZ0ZXI6QnJlYWQvRm9jYWNjaWEubWQ="}}}
JSON
