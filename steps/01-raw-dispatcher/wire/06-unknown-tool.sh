#!/usr/bin/env bash
# A tool that does not exist. This is not a protocol error: the call worked, the tool
# did not, so the answer is a normal result with "isError": true that the model reads.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' <<'JSON'
{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "delete_everything", "arguments": {}}}
JSON
