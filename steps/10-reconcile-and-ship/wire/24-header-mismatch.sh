#!/usr/bin/env bash
# Headers that disagree with the body are refused with 400 and -32020: a proxy may have
# routed the request by its headers, so they must tell the truth. Here Mcp-Name names
# another tool, and then Mcp-Method is missing.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'MCP-Protocol-Version: 2026-07-28' 'Mcp-Method: tools/call' 'Mcp-Name: list_notes' <<'JSON'
{"jsonrpc": "2.0", "id": 34, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Home"}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "8"}}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'MCP-Protocol-Version: 2026-07-28' <<'JSON'
{"jsonrpc": "2.0", "id": 35, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "8"}}}}
JSON
