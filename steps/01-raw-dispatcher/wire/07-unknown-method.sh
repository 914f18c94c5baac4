#!/usr/bin/env bash
# A method the server does not implement (resources come in step 4). This is a protocol
# error, for the client program rather than the model: JSON-RPC code -32601.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' <<'JSON'
{"jsonrpc": "2.0", "id": 6, "method": "resources/list"}
JSON
