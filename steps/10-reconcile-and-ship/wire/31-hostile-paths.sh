#!/usr/bin/env bash
# Every path comes from a model, so every path is untrusted. Each of these is refused
# as a tool error the model can read, and the server goes on: a path out of the vault,
# an absolute one, a Windows one, a hidden folder, a file that is not a note, a folder,
# and a note that does not exist.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 43, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "../../etc/passwd"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 44, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "/etc/passwd"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 45, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "C:\\Windows\\win.ini"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 46, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": ".obsidian/app.json"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 47, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Attachments/hydration-table.csv"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 48, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Bread"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 49, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Bread/Pretzels"}}}
JSON
