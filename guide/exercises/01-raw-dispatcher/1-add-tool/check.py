"""A tool `add` that answers the sum of two numbers, and refuses anything else."""
from probe import expect, ok, shown, text_of, tool_error


def check(server):
    tools = {tool.get("name"): tool for tool in server.result("tools/list")["tools"]}
    expect("add" in tools, "tools/list offers no tool named 'add': declare it in TOOLS in server.py")
    schema = tools["add"].get("inputSchema", {})
    properties = schema.get("properties", {})
    for name in ("a", "b"):
        expect(properties.get(name, {}).get("type") == "number",
               f"add's inputSchema should declare {name!r} with \"type\": \"number\"; it says {shown(schema)}")
    expect(set(schema.get("required", [])) >= {"a", "b"},
           f"add's inputSchema should list both arguments under \"required\"; it says {shown(schema)}")
    ok("tools/list offers add, with a and b as required numbers")

    for arguments, sums in (({"a": 2, "b": 3}, ("5", "5.0")), ({"a": 2.5, "b": 0.25}, ("2.75",))):
        answer = server.call("tools/call", {"name": "add", "arguments": arguments})
        expect("result" in answer, f"add {shown(arguments)} failed: {shown(answer.get('error'))}. "
                                   f"Does call_tool run it?")
        result = answer["result"]
        expect(result.get("isError") is False and text_of(result, "add") in sums,
               f"add {shown(arguments)} should answer the text {sums[0]!r}; it answered {shown(result)}")
    ok("add answers 2 + 3 and 2.5 + 0.25")

    for arguments, wrong in (({"a": 2}, "b"), ({"a": "2", "b": 3}, "a")):
        answer = server.call("tools/call", {"name": "add", "arguments": arguments})
        tool_error(answer, f"add {shown(arguments)}", wrong)
    # Python counts True as an int (bool is a subclass of int); JSON Schema does not count true as a number.
    tool_error(server.call("tools/call", {"name": "add", "arguments": {"a": 1, "b": True}}), 'add {"a": 1, "b": true}',
               "b", "Python counts True as an int (bool is a subclass of int): test isinstance(value, bool) too.")
    ok("a missing argument, a string and true are tool errors that name the argument")
