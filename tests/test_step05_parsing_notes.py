"""Step 5 over real HTTP, against a temporary copy of the sample vault plus hostile
notes: get_note returns what Obsidian would show of a note, one section by heading,
and never lets a note's text break the server."""
import os
import shutil

import pytest

from helpers import McpClient, rpc
from launch import running_server
from manifest import SAMPLE_VAULT, find_step

STEP = find_step(5)
HOSTILE = {
    "Hostile/Python tag.md": "---\ntitle: !!python/object/apply:os.system ['touch /tmp/pwned']\n---\nbody\n",
    "Hostile/Laughs.md": "---\na: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: [*b, *b, *b, *b]\n---\nbody\n",
    "Hostile/Long.md": "---\n" + "key: value\n" * 30_000 + "---\nbody\n",
    "Hostile/Deep.md": "---\n" + "".join(" " * i + f"k{i}:\n" for i in range(300)) + "---\nbody\n",
    "Hostile/Infinity.md": "---\nratio: .inf\nnothing: .nan\n---\nbody\n",
    "Hostile/Unclosed.md": "---\ntags: [a, b\n\nno closing line\n",
    "Hostile/Fences.md": "```\n# not a heading\n[[Not a link]] #nottag\n```\n# Real\n[[Real link]] #realtag\n",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    vault = tmp_path_factory.mktemp("step5") / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    for name, text in HOSTILE.items():
        (vault / name).parent.mkdir(exist_ok=True)
        (vault / name).write_text(text)
    with running_server(STEP.server, "--vault", str(vault)) as (url, _log):
        client = McpClient(url)
        client.session_id = client.open_session()
        yield client


def get_note(server, **arguments):
    result = server.send(server.session_id, rpc("tools/call", name="get_note", arguments=arguments)).json()["result"]
    return result


def note(server, **arguments) -> dict:
    result = get_note(server, **arguments)
    assert result["isError"] is False, result
    return result["structuredContent"]


def test_a_note_comes_with_properties_tags_aliases_links_and_outline(server):
    bulk = note(server, path="Bread/Bulk fermentation")
    assert bulk["title"] == "Bulk fermentation"
    assert bulk["frontmatter"]["created"] == "2026-02-10"  # dates stay text, as Obsidian shows them
    assert bulk["tags"] == ["sourdough", "technique"]  # from "tags: sourdough, technique"
    assert bulk["aliases"] == ["Bulk", "First rise"]
    assert {"target": "Sourdough starter", "subpath": "^peak-signs", "embed": True} .items() <= bulk["links"][0].items()
    assert [h["heading"] for h in bulk["outline"]][:2] == ["Bulk fermentation", "Rise targets by temperature"]
    assert not bulk["text"].startswith("---")  # the properties are not repeated in the text


def test_one_section_by_its_heading(server):
    section = note(server, path="Bread/Bulk fermentation", heading="Signs bulk is finished")
    assert section["heading"] == "Signs bulk is finished"
    assert section["text"].startswith("## Signs bulk is finished")
    assert "Rise targets" not in section["text"]


def test_a_missing_heading_is_a_tool_error_that_lists_the_headings(server):
    text = get_note(server, path="Home", heading="Pretzels")["content"][0]["text"]
    assert 'no heading "Pretzels"' in text and '"Ferments"' in text


def test_malformed_frontmatter_keeps_the_text_and_tells_the_model_why(server):
    kraut = note(server, path="Ferments/Sauerkraut")
    assert kraut["frontmatter"] == {} and kraut["tags"] == []
    assert "line 4" in kraut["frontmatterError"]
    assert "# Sauerkraut" in kraut["text"]


def test_a_js_fence_is_not_frontmatter(server):
    rye = note(server, path="Bread/Rye bread")
    assert rye["frontmatter"] == {} and "frontmatterError" not in rye
    assert rye["text"].startswith("---js")
    assert "sourdough" not in rye["tags"]  # the tags inside ---js are plain text


def test_code_fences_hide_headings_links_and_tags(server):
    fences = note(server, path="Hostile/Fences")
    assert [h["heading"] for h in fences["outline"]] == ["Real"]
    assert [link["target"] for link in fences["links"]] == ["Real link"]
    assert fences["tags"] == ["realtag"]


def test_yaml_tags_are_never_executed_and_aliases_never_expanded(server, tmp_path):
    python = note(server, path="Hostile/Python tag")
    assert python["frontmatter"]["title"] == ["touch /tmp/pwned"]  # the tag is ignored: plain data
    assert not os.path.exists("/tmp/pwned")
    laughs = note(server, path="Hostile/Laughs")
    assert len(str(laughs["frontmatter"])) < 200  # *a stays the text "*a"


@pytest.mark.parametrize("name", ["Hostile/Long", "Hostile/Deep", "Hostile/Unclosed"])
def test_hostile_frontmatter_is_refused_or_read_and_the_server_goes_on(server, name):
    result = note(server, path=name)
    assert result["text"]
    assert note(server, path="Home")["title"] == "Home"


def test_yaml_infinity_and_nan_travel_as_text_because_json_has_no_spelling_for_them(server):
    reply = server.send(server.session_id, rpc("tools/call", name="get_note", arguments={"path": "Hostile/Infinity"}))
    assert b": Infinity" not in reply.body and b": NaN" not in reply.body
    assert reply.json()["result"]["structuredContent"]["frontmatter"] == {"ratio": "inf", "nothing": "nan"}


def test_the_heading_argument_is_checked_like_any_other(server):
    result = get_note(server, path="Home", heading=3)
    assert result["isError"] and "heading: must be a string" in result["content"][0]["text"]
