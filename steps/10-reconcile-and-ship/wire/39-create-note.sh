#!/usr/bin/env bash
# The one write: a new note in the inbox. The title becomes a safe file name; the same
# title again is refused, never overwritten; a title that tries to leave the inbox
# stays in it; and a tag that is not a tag is refused before anything is written.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 67, "method": "tools/call", "params": {"name": "create_note", "arguments": {"title": "Questions: the bakery visit?", "content": "Ask about their [[Sourdough starter]] feeding times.", "tags": ["bread/questions"]}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 68, "method": "tools/call", "params": {"name": "create_note", "arguments": {"title": "questions  the bakery visit", "content": "Again."}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 69, "method": "tools/call", "params": {"name": "create_note", "arguments": {"title": "../../Home", "content": "Not over Home.md"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 70, "method": "tools/call", "params": {"name": "create_note", "arguments": {"title": "Tags", "content": "x", "tags": ["not a tag"]}}}
JSON
