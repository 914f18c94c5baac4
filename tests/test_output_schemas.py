"""Every tool's structuredContent fits the outputSchema it declares, in every step that has one.

The specification says a server that declares an output schema must send structured
results that conform to it, and clients may check: the official SDK's client does,
and refuses a result that does not fit. So each step's server is run on a copy of
the sample vault and every tool is called in the ways a model calls it (filters,
a heading, an empty page, a note with broken properties), and each result is held
to its declaration by the step's own schema.py.
"""
import shutil
import time

import pytest

from helpers import McpClient, rpc, step_modules
from launch import running_server
from manifest import SAMPLE_VAULT, load_steps

STEPS_WITH_OUTPUT_SCHEMAS = [step for step in load_steps() if step.number >= 4]
# From step 8 on, get_note also opens a note by a link's name, and says how it found it.
BY_LINK_NAME_FROM = 8
BY_LINK_NAME = [
    ("get_note", {"path": "bulk FERMENTATION"}),  # resolvedFrom
    ("get_note", {"path": "troubleshooting"}),  # two notes of that name: candidates too
]

# (tool, arguments) pairs; a step calls those of its tools that are listed.
CALLS = [
    ("list_notes", {}),
    ("list_notes", {"folder": "Bread", "limit": 2}),
    ("get_note", {"path": "Bread/Bulk fermentation"}),
    ("get_note", {"path": "Bread/Bulk fermentation", "heading": "Signs bulk is finished"}),
    ("get_note", {"path": "Ferments/Sauerkraut"}),  # broken properties: frontmatterError
    ("get_note", {"path": "Bread/Rye bread"}),
    ("search_vault", {"query": "how much salt for sauerkraut"}),
    ("search_vault", {"query": "starter", "mode": "keyword", "limit": 3}),
    ("search_vault", {"query": "dense crumb", "mode": "semantic", "folder": "Bread"}),
    ("search_vault", {"query": "cabbage", "tag": "ferment"}),
    ("search_vault", {"query": "zzzqqq"}),  # nothing found
    ("get_backlinks", {"path": "Ferments/Troubleshooting"}),
    ("get_backlinks", {"path": "Home"}),
    ("related_notes", {"path": "Ferments/Kimchi", "limit": 4}),
    ("list_tags", {}),
    ("create_note", {"title": "Output schema check", "content": "A note.", "tags": ["test"]}),
    ("list_notes", {"sort": "created", "where": {"status": {"exists": True}}, "limit": 1}),  # created, a cursor
    ("get_note", {"path": "Ferments/Koji", "maxChars": 600}),  # truncated, nextOffset, totalChars
    ("daily_note", {"date": "2026-04-05"}),  # not there yet
    ("daily_note", {"date": "2026-04-05", "append": "- A line."}),  # created, text
    ("edit_note", {"path": "Home.md", "operation": "append", "content": "A line."}),
    ("set_properties", {"path": "Home.md", "properties": {"reviewed": True}}),
    ("undo_edit", {"editId": "editId"}),  # the id the last write answered with (see LATER)
    ("get_note", {"path": "Ferments/Koji"}),
    ("delete_note", {"path": "Ferments/Koji.md", "version": "version"}),  # the version just read
    ("get_note", {"path": "Ferments/Miso"}),
    ("move_note", {"path": "Ferments/Miso.md", "to": "Ferments/Old/Miso.md", "version": "version"}),
    ("reindex", {}),
]


# Arguments taken from an answer before: the editId of the last write, the version of the last read.
LATER = {"editId", "version"}


@pytest.mark.parametrize("step", STEPS_WITH_OUTPUT_SCHEMAS, ids=lambda step: step.folder)
def test_every_structured_result_fits_its_output_schema(step, tmp_path):
    with step_modules(step.path):
        from schema import validate
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    with running_server(step.server, "--vault", str(vault), timeout=30) as (url, _log):
        client = McpClient(url)
        session = client.open_session()
        tools = client.send(session, rpc("tools/list")).json()["result"]["tools"]
        schemas = {tool["name"]: tool["outputSchema"] for tool in tools if "outputSchema" in tool}
        accepted = {tool["name"]: set(tool["inputSchema"].get("properties", {})) for tool in tools}
        assert schemas, f"{step.folder} declares no output schema"
        checked, seen = set(), {}
        calls = CALLS + (BY_LINK_NAME if step.number >= BY_LINK_NAME_FROM else [])
        for number, (name, arguments) in enumerate(calls, 2):
            if name not in schemas or not set(arguments) <= accepted[name]:  # a tool or argument of a later step
                continue
            arguments = {key: seen.get(value, value) if key in LATER else value for key, value in arguments.items()}
            result = call_once_indexed(client, session, rpc("tools/call", id=number, name=name, arguments=arguments))
            seen.update({key: value for key, value in result.get("structuredContent", {}).items() if key in LATER})
            assert result["isError"] is False, (name, arguments, result)
            problems = validate(schemas[name], result["structuredContent"])
            assert problems == [], f"{step.folder} {name}({arguments}): {problems}"
            extra = undeclared(schemas[name], result["structuredContent"])
            assert extra == [], f"{step.folder} {name}({arguments}) sends fields its schema does not name: {extra}"
            checked.add(name)
        assert checked == set(schemas), f"tools never called: {sorted(set(schemas) - checked)}"


def call_once_indexed(client, session, call, timeout=60.0) -> dict:
    """The call's result, asked again while the server says its index is still being
    built, or answers from the part built so far: from step 7 the index builds in the
    background, slowly on a busy machine."""
    deadline = time.monotonic() + timeout
    while True:
        result = client.send(session, call).json()["result"]
        text = result["content"][0]["text"]
        building = (result["isError"] and ("still being built" in text or "already being rebuilt" in text)
                    or "indexed" in result.get("structuredContent", {}))
        if not building or time.monotonic() > deadline:
            return result
        time.sleep(0.1)


def undeclared(schema: dict, value, where: str = "") -> list[str]:
    """The fields of a result that its schema does not name, where the schema names its
    fields: allowed by JSON Schema, but a field the declaration keeps quiet about is one
    a client cannot know to read."""
    found = []
    if isinstance(value, dict) and "properties" in schema:
        for key, item in value.items():
            if key in schema["properties"]:
                found += undeclared(schema["properties"][key], item, f"{where}{key}.")
            else:
                found.append(f"{where}{key}")
    elif isinstance(value, list) and "items" in schema:
        for number, item in enumerate(value):
            found += undeclared(schema["items"], item, f"{where}{number}.")
    return found
