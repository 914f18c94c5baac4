#!/usr/bin/env bash
# A note read the way Obsidian reads it: its properties, tags from the properties and
# the text, links (an embed of a block, among them), and the outline. Then one section
# by its heading; a note whose frontmatter is malformed (its text is kept, its
# properties are empty, and the model is told why); a note that opens with ---js,
# which Obsidian does not take for frontmatter at all; a heading that is not there; and
# a block read by its id.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 56, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Bread/Bulk fermentation"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 57, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Bread/Bulk fermentation", "heading": "Signs bulk is finished"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 58, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Ferments/Sauerkraut", "heading": "Salt"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 59, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Bread/Rye bread", "heading": "Let it rest"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 60, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Home", "heading": "Sourdough"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 74, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Glossary", "heading": "^kahm"}}}
JSON
