#!/usr/bin/env bash
# A move: the sourdough starter note goes into a folder of its own, under a new name.
# get_note gives its version; move_note moves it and rewrites every link to it in the
# other notes, in the form Obsidian would write, and names them; undo_edit puts the
# note and every link back.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": {"name": "get_backlinks", "arguments": {"path": "Bread/Sourdough starter.md"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 78, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Bread/Sourdough starter", "heading": "^peak-signs", "embeds": false}}}
JSON
remember_version

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<JSON
{"jsonrpc": "2.0", "id": 79, "method": "tools/call", "params": {"name": "move_note", "arguments": {"path": "Bread/Sourdough starter.md", "to": "Bread/Starter/Levain.md", "version": "$VERSION"}}}
JSON
remember_edit

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 80, "method": "tools/call", "params": {"name": "get_backlinks", "arguments": {"path": "Bread/Starter/Levain.md"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<JSON
{"jsonrpc": "2.0", "id": 81, "method": "tools/call", "params": {"name": "undo_edit", "arguments": {"editId": "$EDIT_ID"}}}
JSON
