#!/usr/bin/env bash
# Undo the edit of 43-edit-note.sh by the editId it answered with: the note gets back
# its bytes as they were before, and the answer names it. The same id again finds
# nothing: an edit is undone once.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<JSON
{"jsonrpc": "2.0", "id": 74, "method": "tools/call", "params": {"name": "undo_edit", "arguments": {"editId": "$EDIT_ID"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<JSON
{"jsonrpc": "2.0", "id": 75, "method": "tools/call", "params": {"name": "undo_edit", "arguments": {"editId": "$EDIT_ID"}}}
JSON
