#!/usr/bin/env bash
# A resource that does not exist is a protocol error, not a tool error: the client
# asked for it, not the model. The handshake era has a code of its own for it, -32002;
# 2026-07-28 reports it as invalid params, -32602, with 400 over HTTP. A URI that tries
# to leave the vault is invalid params in both.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 53, "method": "resources/read", "params": {"uri": "vault:///Bread/Pretzels.md"}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 54, "method": "resources/read", "params": {"uri": "vault:///..%2F..%2Fetc%2Fpasswd"}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'MCP-Protocol-Version: 2026-07-28' 'Mcp-Method: resources/read' 'Mcp-Name: vault:///Bread/Pretzels.md' <<'JSON'
{"jsonrpc": "2.0", "id": 55, "method": "resources/read", "params": {"uri": "vault:///Bread/Pretzels.md", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "8"}}}}
JSON
