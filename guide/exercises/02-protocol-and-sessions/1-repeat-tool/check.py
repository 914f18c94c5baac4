"""A tool `repeat` whose schema sets limits, and whose function keeps them."""
from probe import expect, ok, shown, text_of, tool_error


def check(server):
    server.handshake()
    tools = {tool.get("name"): tool for tool in server.result("tools/list")["tools"]}
    expect("repeat" in tools, "tools/list offers no tool named 'repeat': add it to TOOLS in tools.py")
    schema = tools["repeat"].get("inputSchema", {})
    properties = schema.get("properties", {})
    expect(properties.get("text", {}).get("type") == "string",
           f"repeat's inputSchema should declare 'text' with \"type\": \"string\"; it says {shown(schema)}")
    times = properties.get("times", {})
    expect((times.get("type"), times.get("minimum"), times.get("maximum")) == ("integer", 1, 10),
           f"repeat's inputSchema should declare 'times' as "
           f"{{\"type\": \"integer\", \"minimum\": 1, \"maximum\": 10}}; it says {shown(times)}")
    expect(set(schema.get("required", [])) >= {"text", "times"},
           f"repeat's inputSchema should list text and times under \"required\"; it says {shown(schema)}")
    ok("tools/list offers repeat, and its schema states the limits")

    answer = server.call("tools/call", {"name": "repeat", "arguments": {"text": "ab", "times": 3}})
    expect("result" in answer, f"repeat failed: {shown(answer.get('error'))}")
    expect(answer["result"].get("isError") is False and text_of(answer["result"], "repeat") == "ababab",
           f"repeat with text \"ab\" and times 3 should answer \"ababab\"; it answered {shown(answer['result'])}")
    ok("repeat answers \"ab\" three times")

    hints = {True: "Python counts True as an int (bool is a subclass of int): test isinstance(times, bool) too."}
    for value in (0, 11, "3", 2.5, True):
        arguments = {"text": "ab", "times": value}
        what = f"repeat {shown(arguments)}"
        tool_error(server.call("tools/call", {"name": "repeat", "arguments": arguments}), what, "times",
                   hints.get(value, "The schema is a promise to the client; only the function can keep it."))
    tool_error(server.call("tools/call", {"name": "repeat", "arguments": {"times": 2}}),
               'repeat {"times": 2}', "text")
    ok("times out of range, or not an integer, and a missing text are tool errors that name the argument")
