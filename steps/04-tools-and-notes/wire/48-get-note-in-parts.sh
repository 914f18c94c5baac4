#!/usr/bin/env bash
# A long note in parts. maxChars (40,000 unless given; 600 here, so that a note of the
# sample vault is long enough) bounds the text of one answer: a longer one says
# truncated, where the next part starts (nextOffset) and how long the whole is.
# Passing nextOffset as offset gives the next part; the parts add up to the note. An
# offset past the end is refused.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 84, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Ferments/Koji", "maxChars": 600}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 85, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Ferments/Koji", "maxChars": 600, "offset": 578}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 86, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Ferments/Koji", "offset": 100000}}}
JSON
