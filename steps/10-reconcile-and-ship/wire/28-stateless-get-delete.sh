#!/usr/bin/env bash
# No streams to open and no sessions to end: in this era GET and DELETE are 405.
. "$(dirname "$0")/lib.sh"

send GET 'Accept: text/event-stream' 'MCP-Protocol-Version: 2026-07-28'

send DELETE 'MCP-Protocol-Version: 2026-07-28'
