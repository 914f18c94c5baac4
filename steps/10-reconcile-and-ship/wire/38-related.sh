#!/usr/bin/env bash
# What else belongs with a note: its links both ways, notes two links away, and notes
# similar in content, merged, each with the reasons it is there.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 66, "method": "tools/call", "params": {"name": "related_notes", "arguments": {"path": "Ferments/Kimchi", "limit": 4}}}
JSON
