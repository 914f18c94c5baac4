#!/usr/bin/env bash
# A question about properties. "Which books am I still reading?": list_notes with where,
# on the status property (text compares without case; a list property matches when one
# of its items does). "Which ferments record their salt?": exists. A where that is no
# object of properties is refused in words.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 82, "method": "tools/call", "params": {"name": "list_notes", "arguments": {"where": {"status": "reading"}}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 84, "method": "tools/call", "params": {"name": "list_notes", "arguments": {"where": {"salt_percent": {"exists": true}}}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 85, "method": "tools/call", "params": {"name": "list_notes", "arguments": {"where": {"status": {"above": 3}}}}}
JSON
