"""A prompt `reword`: the prompts capability, prompts/list and prompts/get."""
from probe import expect, ok, shown

TEXT = "The meeting has been moved to a later point in time."


def protocol_error(answer: dict, what: str, mention: str = "") -> None:
    error = answer.get("error") or {}
    expect(error.get("code") == -32602,
           f"{what} should be answered with the JSON-RPC error -32602 (invalid params): the client asked for "
           f"something it was never offered. It got {shown(answer)}")
    expect(mention in error.get("message", ""), f"{what}: the error message should name {mention!r}; it says "
                                                f"{error.get('message')!r}")


def check(server):
    capabilities = server.handshake(finish=False).get("capabilities", {})
    expect(isinstance(capabilities.get("prompts"), dict),
           f"initialize's capabilities should include \"prompts\": {{...}}, so the client knows to ask; they are "
           f"{shown(capabilities)}")
    ok("initialize declares the prompts capability")

    early = server.call("prompts/list")
    expect((early.get("error") or {}).get("code") == -32600,
           f"prompts/list before notifications/initialized should get the same -32600 as tools/list; it got "
           f"{shown(early)}. Put the new methods where on_request looks up tools/list")
    server.notify("notifications/initialized")
    ok("prompts/list waits for the handshake, like tools/list")

    prompts = {prompt.get("name"): prompt for prompt in server.result("prompts/list").get("prompts", [])}
    expect("reword" in prompts, f"prompts/list offers no prompt named 'reword': {shown(list(prompts))}")
    arguments = prompts["reword"].get("arguments", [])
    expect({"name": "text", "required": True}.items() <= next(iter(arguments), {}).items(),
           f"reword should declare one argument, text, with \"required\": true; it declares {shown(arguments)}")
    ok("prompts/list offers reword, with its required argument text")

    result = server.result("prompts/get", {"name": "reword", "arguments": {"text": TEXT}})
    messages = result.get("messages")
    expect(isinstance(messages, list) and messages and isinstance(messages[0], dict),
           f"prompts/get should answer a list of messages; it answered {shown(result)}")
    first = messages[0]
    content = first.get("content") if isinstance(first.get("content"), dict) else {}
    expect(first.get("role") == "user" and content.get("type") == "text" and TEXT in content.get("text", ""),
           f"reword's message should be a user message whose text content holds the text it was given; it is "
           f"{shown(first)}")
    ok("prompts/get fills the text into a user message")

    protocol_error(server.call("prompts/get", {"name": "summarise", "arguments": {}}),
                   "prompts/get for an unknown prompt", "summarise")
    protocol_error(server.call("prompts/get", {"name": "reword", "arguments": {}}),
                   "prompts/get for reword without text", "text")
    ok("an unknown prompt and a missing argument are JSON-RPC errors, -32602")
