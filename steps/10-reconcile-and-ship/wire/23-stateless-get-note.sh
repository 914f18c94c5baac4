#!/usr/bin/env bash
# A tool call also names the tool in a header, Mcp-Name.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'MCP-Protocol-Version: 2026-07-28' 'Mcp-Method: tools/call' 'Mcp-Name: get_note' <<'JSON'
{"jsonrpc": "2.0", "id": 33, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Inbox/Try tangzhong.md"}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "8"}}}}
JSON
