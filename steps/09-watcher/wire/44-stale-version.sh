#!/usr/bin/env bash
# The same version again, after 43-edit-note.sh changed the note: the server refuses,
# names the note's version now, and writes nothing. The model reads the note again.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<JSON
{"jsonrpc": "2.0", "id": 73, "method": "tools/call", "params": {"name": "edit_note", "arguments": {"path": "Bread/Rye bread.md", "operation": "replace_section", "heading": "Let it rest", "content": "Written over what the model never saw.", "version": "$VERSION"}}}
JSON
