"""The sample vault has what the guide and the later steps rely on."""
import json
import re

from manifest import SAMPLE_VAULT

NOTES = sorted(p for p in SAMPLE_VAULT.rglob("*.md") if ".obsidian" not in p.parts)
TEXT = {p.relative_to(SAMPLE_VAULT).as_posix(): p.read_text(encoding="utf-8") for p in NOTES}


def anywhere(pattern: str) -> list[str]:
    return [name for name, text in TEXT.items() if re.search(pattern, text, re.MULTILINE)]


def test_twenty_to_forty_notes_in_folders():
    assert 20 <= len(NOTES) <= 40
    folders = {p.relative_to(SAMPLE_VAULT).parts[0] for p in NOTES if len(p.relative_to(SAMPLE_VAULT).parts) > 1}
    assert {"Bread", "Ferments", "Kitchen", "Journal", "Reading", "Inbox"} <= folders


def test_every_note_is_utf8_with_lf_endings():
    for path in NOTES:
        data = path.read_bytes()
        assert b"\r" not in data, path
        assert data.endswith(b"\n"), path


def test_two_notes_share_a_name_in_different_folders():
    assert (SAMPLE_VAULT / "Bread" / "Troubleshooting.md").is_file()
    assert (SAMPLE_VAULT / "Ferments" / "Troubleshooting.md").is_file()


def test_frontmatter_in_its_common_forms():
    assert anywhere(r"\A---\ntags:\s*\[")  # flow list
    assert anywhere(r"\A---\n(?:.*\n)*?tags:\n\s*- ")  # block list
    assert anywhere(r"\A---\ntags: [^\[\n]+,")  # a, b string form
    assert anywhere(r"^aliases:")
    assert anywhere(r"^created: 2026-\d\d-\d\d$")
    assert anywhere(r'^related: "\[\[')  # a link property is quoted
    assert anywhere(r"^\w+: \|$")  # a block scalar


def test_a_js_fence_that_is_not_frontmatter_and_a_malformed_one():
    assert anywhere(r"\A---js\n")
    assert "Ferments/Sauerkraut.md" in TEXT and TEXT["Ferments/Sauerkraut.md"].startswith("---\n")


def test_links_embeds_and_markdown_links():
    assert anywhere(r"\[\[[^\]|#]+\|[^\]]+\]\]")  # alias
    assert anywhere(r"\[\[[^\]]+#[^\]^]+\]\]")  # heading
    assert anywhere(r"\[\[[^\]]+#\^[\w-]+\]\]")  # block
    assert anywhere(r"\[\[#[^\]]+\]\]")  # same note
    assert anywhere(r"!\[\[[^\]]+\]\]")  # embed
    assert anywhere(r"\]\([^)]*%20[^)]*\.md\)")  # [text](Note%20Name.md)
    assert anywhere(r"\]\(<[^>]+\.md>\)")  # [text](<Note Name.md>)
    assert anywhere(r"\s\^[\w-]+$")  # a block id


def test_code_fences_hide_headings_links_and_tags():
    fenced = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1", re.MULTILINE | re.DOTALL)
    bodies = [m.group(2) for text in TEXT.values() for m in fenced.finditer(text)]
    assert any(re.search(r"^# ", body, re.MULTILINE) for body in bodies)
    assert any("[[" in body for body in bodies)


def test_callouts_comments_and_tags():
    assert anywhere(r"^> \[!\w+\]")
    assert anywhere(r"^> \[!\w+\]-")  # foldable
    assert anywhere(r"%%.+%%")
    assert anywhere(r"(^|\s)#[a-z][\w/-]*/[\w-]+")  # nested tag
    assert anywhere(r"<!--.*#\w")  # a tag hidden in an HTML comment


def test_attachments_and_ignored_folders():
    assert (SAMPLE_VAULT / "Attachments" / "crumb-chart.svg").is_file()
    assert (SAMPLE_VAULT / "Attachments" / "hydration-table.csv").is_file()
    json.loads((SAMPLE_VAULT / ".obsidian" / "app.json").read_text())
    assert anywhere(r"!\[\[crumb-chart\.svg")
