#!/usr/bin/env bash
# Before an edit, a read: get_note gives the section to change and the note's version,
# a hash of its bytes, which 43-edit-note.sh passes back (remember_version keeps it).
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 71, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Bread/Rye bread", "heading": "Let it rest", "embeds": false}}}
JSON
remember_version
