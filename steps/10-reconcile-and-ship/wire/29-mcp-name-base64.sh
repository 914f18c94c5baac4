#!/usr/bin/env bash
# Header values are plain ASCII. A tool name that is not (accents, other scripts,
# spaces at either end) travels in Mcp-Name as =?base64?...?=, the base64 of its
# UTF-8 bytes. The server decodes it before comparing; here "get_note" is sent that way.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'MCP-Protocol-Version: 2026-07-28' 'Mcp-Method: tools/call' 'Mcp-Name: =?base64?Z2V0X25vdGU=?=' <<'JSON'
{"jsonrpc": "2.0", "id": 39, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Inbox/Rice koji quick capture"}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "8"}}}}
JSON
