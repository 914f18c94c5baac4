#!/usr/bin/env bash
# An edit checked against the version read (42-read-version.sh): edit_note appends a
# line at the end of the section, passing that version, and answers with the new one.
# Every other byte of the note stays as it was; the editId is kept for 45-undo-edit.sh.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<JSON
{"jsonrpc": "2.0", "id": 72, "method": "tools/call", "params": {"name": "edit_note", "arguments": {"path": "Bread/Rye bread.md", "operation": "append", "heading": "Let it rest", "content": "Next time: slice after 36 hours and compare.", "version": "$VERSION"}}}
JSON
remember_edit
