#!/usr/bin/env bash
# GET would open a stream for messages the server sends unasked. This server has none
# to send, so GET is 405, with the reason and the methods that are allowed.
. "$(dirname "$0")/lib.sh"

send GET 'Accept: text/event-stream' "Mcp-Session-Id: $SESSION"
