#!/usr/bin/env bash
# Which notes link to a note, resolved as Obsidian resolves them: two notes are called
# Troubleshooting, and a bare [[Troubleshooting]] means the one in the linking note's own
# folder. Each backlink comes with its line, and the block it points at when it names one.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 65, "method": "tools/call", "params": {"name": "get_backlinks", "arguments": {"path": "Ferments/Troubleshooting"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 75, "method": "tools/call", "params": {"name": "get_backlinks", "arguments": {"path": "Glossary"}}}
JSON
