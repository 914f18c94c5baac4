#!/usr/bin/env bash
# A tool call: read one note. The result carries the note twice, as structured
# content that fits the tool's output schema, and as the same JSON in a text block.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Bread/Focaccia"}}}
JSON
