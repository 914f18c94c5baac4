"""The edges of steps 4 to 10, site by site, for the kinds of bug test_edges.py holds: a
comparison with a limit one off, a falsy value taken for an absent one, a name split at
the wrong separator or compared without its boundary, and the edges of Obsidian's Markdown
and properties. Each site that no other test held is held here, in every distinct copy of
its file, and each test fails with its bug planted."""
import json
import logging

import pytest

from helpers import distinct_copies, step_modules
from manifest import find_step
from test_edges import make_vault, modules
from test_embeddings import stand_in  # noqa: F401  (a fixture: a stand-in for Ollama)


# ---- vault.py and resources.py -----------------------------------------------------------

VAULT_STEPS = distinct_copies("vault.py", since=4)


@pytest.mark.parametrize("step", VAULT_STEPS)
def test_a_path_of_exactly_the_longest_length_is_judged_and_one_longer_is_refused_unread(step):
    (vault_module,) = modules(step, "vault")
    longest = "a/" * (vault_module.MAX_PATH_CHARS // 2 - 1) + "bc"
    assert len(longest) == vault_module.MAX_PATH_CHARS
    assert vault_module.path_parts(longest)[-1] == "bc"
    with pytest.raises(vault_module.VaultError, match="longer than"):
        vault_module.path_parts(longest + "d")


@pytest.mark.parametrize("step", VAULT_STEPS)
def test_a_name_ending_in_md_without_the_dot_is_no_note_and_gets_its_md(step, tmp_path):
    """"Farmd" is not a note; "Farmd" asks for the note "Farmd.md", as a link would."""
    (vault_module,) = modules(step, "vault")
    root = make_vault(tmp_path, {"Farmd.md": "# Farm\n", "Plan.txtmd": "not a note\n", "Notes/Xmd": "nor this\n"})
    vault = vault_module.Vault(root)
    assert vault.list_notes() == ["Farmd.md"]
    assert vault.read_note("Farmd") == ("Farmd.md", "# Farm\n")
    for path in ("Plan.txtmd", "Notes/Xmd"):
        with pytest.raises(vault_module.VaultError, match="not a note"):
            vault.read_note(path)


@pytest.mark.parametrize("step", VAULT_STEPS)
def test_a_path_shown_in_a_message_is_whole_up_to_the_limit_and_cut_to_it_past(step, tmp_path):
    (vault_module,) = modules(step, "vault")
    vault = vault_module.Vault(make_vault(tmp_path, {"Home.md": ""}))
    fits = "n" * 98  # 100 characters once quoted: the limit of shown()
    with pytest.raises(vault_module.NoteNotFound) as whole:
        vault.read_note(fits)
    assert f'"{fits}"' in str(whole.value)
    with pytest.raises(vault_module.NoteNotFound) as cut:
        vault.read_note(fits + "o")
    assert f'"{fits}…' in str(cut.value) and fits + "o" not in str(cut.value)


@pytest.mark.parametrize("step", VAULT_STEPS)
def test_a_link_into_a_folder_beside_the_vault_named_like_its_start_leads_outside(step, tmp_path):
    """The vault is "notes"; "notes-private" beside it starts with the same letters, and is outside."""
    import os
    (vault_module,) = modules(step, "vault")
    root = make_vault(tmp_path / "notes", {"Home.md": ""})
    make_vault(tmp_path / "notes-private", {"Secret.md": "secret"})
    try:
        os.symlink(tmp_path / "notes-private" / "Secret.md", root / "Secret.md")
    except (OSError, NotImplementedError):
        pytest.skip("this system does not let us create symlinks")
    vault = vault_module.Vault(root)
    assert vault.list_notes() == ["Home.md"]
    with pytest.raises(vault_module.VaultError, match="outside the vault"):
        vault.read_note("Secret.md")


@pytest.mark.parametrize("step", VAULT_STEPS)
def test_a_cursor_is_known_by_its_whole_prefix_colon_included(step):
    import base64
    (vault_module,) = modules(step, "vault")
    names = [f"Note {n:02d}.md" for n in range(30)]
    first, cursor = vault_module.page(names, None, 10)
    assert vault_module.page(names, cursor, 10)[0] == names[10:20]
    forged = base64.urlsafe_b64encode(b"after" + names[9].encode()).decode()  # "after" without its ":"
    with pytest.raises(vault_module.InvalidCursor):
        vault_module.page(names, forged, 10)


@pytest.mark.parametrize("step", VAULT_STEPS)
def test_a_deep_note_uri_keeps_every_slash_and_escapes_each_segment(step, tmp_path):
    vault_module, resources = modules(step, "vault", "resources")
    assert vault_module.path_to_uri("Bread/Rye bread/Loaf #1.md") == "vault:///Bread/Rye%20bread/Loaf%20%231.md"
    root = make_vault(tmp_path, {"Bread/Rye/Loaf.md": ""})
    [listed] = resources.list_resources(vault_module.Vault(root), None)["resources"]
    assert listed["uri"] == "vault:///Bread/Rye/Loaf.md"


# ---- markdown.py: headings, sections, blocks, masking ------------------------------------

MARKDOWN_STEPS = distinct_copies("markdown.py", since=5)


@pytest.mark.parametrize("step", MARKDOWN_STEPS)
def test_a_line_that_goes_on_a_list_item_keeps_the_list_open_for_its_indented_paragraph(step):
    """A lazy continuation line is still the item; after a blank line, text indented four
    spaces is the item's next paragraph, not code."""
    (markdown,) = modules(step, "markdown")
    links = markdown.find_links("- item\nlazy continuation\n\n    [[Link]]\n")
    assert [link.target for link in links] == ["Link"]


@pytest.mark.parametrize("step", MARKDOWN_STEPS)
def test_a_dollar_followed_by_a_space_opens_no_math(step):
    (markdown,) = modules(step, "markdown")
    assert [link.target for link in markdown.find_links("costs $ [[Price]]$ today")] == ["Price"]
    assert [link.target for link in markdown.find_links("costs $[[Price]]$ today")] == []


@pytest.mark.parametrize("step", MARKDOWN_STEPS)
def test_a_section_chain_skips_a_sibling_of_the_same_level_and_an_empty_part(step):
    (markdown,) = modules(step, "markdown")
    text = "# A\n## B\n## C\ntext\n"
    assert markdown.section_text(text, "B#C") is None  # C is beside B, not under it
    assert markdown.section_text(text, "A#C") == "## C\ntext"
    assert markdown.section_text(text, "#C") == "## C\ntext"  # a heading asked for as a link writes it
    assert markdown.section_text(text, "A##C#") == "## C\ntext"


@pytest.mark.parametrize("step", MARKDOWN_STEPS)
def test_a_chain_of_headings_is_found_only_in_its_order(step):
    (markdown,) = modules(step, "markdown")
    text = "# A\n## B\n### C\n#### D\ntext\n"
    assert markdown.section_text(text, "A#C#D") == "#### D\ntext"
    assert markdown.section_text(text, "B#A#D") is None


@pytest.mark.parametrize("step", MARKDOWN_STEPS)
def test_an_id_names_no_heading_and_no_blank_lines_at_the_top_of_a_note(step):
    (markdown,) = modules(step, "markdown")
    assert markdown.find_blocks("## Title ^abc\ntext ^def\n") == [markdown.Block("def", 2, "text")]
    for text in ("\n^abc\n", "\n\n^abc", " \n\n^abc\ntext ^def"):
        assert [block.id for block in markdown.find_blocks(text)] == (["def"] if "def" in text else []), text


@pytest.mark.parametrize("step", MARKDOWN_STEPS)
def test_a_block_under_a_heading_starts_below_it(step):
    (markdown,) = modules(step, "markdown")
    assert markdown.find_blocks("# H\ntext\nmore ^abc\n") == [markdown.Block("abc", 2, "text\nmore")]
    assert markdown.find_blocks("- a\n# H\n\n^abc\n") == []  # a heading above the blank line is no block


@pytest.mark.parametrize("step", MARKDOWN_STEPS)
def test_a_link_names_a_block_only_when_its_subpath_starts_with_a_caret(step):
    (markdown,) = modules(step, "markdown")
    [heading, block] = markdown.find_links("[[Note#Day^2]] [[Note#^day-2]]")
    assert (heading.block, block.block) == ("", "day-2")


# ---- markdown.py: chunks and links -------------------------------------------------------

def pieces(markdown, text: str, max_chars: int = 20) -> list[str]:
    """The pieces a note titled "T" is cut into; each chunk is "T", a blank line, the piece."""
    section = markdown.Section("", 0, [], 1, text)
    return [chunk.text.removeprefix("T\n\n") for chunk in markdown.chunk_sections("T", [section], max_chars)]


@pytest.mark.parametrize("step", MARKDOWN_STEPS)
def test_paragraphs_that_fill_a_chunk_exactly_share_it(step):
    """max_chars 20, title "T": 17 characters are left for the pieces ("T" and a blank line)."""
    (markdown,) = modules(step, "markdown")
    assert pieces(markdown, "a" * 7 + "\n\n" + "b" * 8) == ["a" * 7 + "\n\n" + "b" * 8]
    assert pieces(markdown, "a" * 7 + "\n\n" + "b" * 9) == ["a" * 7, "b" * 9]
    assert all(len(chunk.text) <= 20 for chunk in markdown.chunk_sections(
        "T", [markdown.Section("", 0, [], 1, "a" * 7 + "\n\n" + "b" * 8)], 20))


@pytest.mark.parametrize("step", MARKDOWN_STEPS)
def test_a_long_line_is_cut_at_the_last_space_that_fits_and_nowhere_else(step):
    (markdown,) = modules(step, "markdown")
    # a space right after 17 characters is the cut: the first piece fills its room
    assert pieces(markdown, "a" * 10 + " " + "b" * 6 + " " + "c" * 5) == ["a" * 10 + " " + "b" * 6, "c" * 5]
    # what is left after a cut, exactly 17 characters, is one piece
    assert pieces(markdown, "a" * 10 + " " + "b" * 8 + " " + "c" * 8) == ["a" * 10, "b" * 8 + " " + "c" * 8]
    # a cut that reaches the end of the line leaves no empty piece
    assert pieces(markdown, "a" * 17 + " " + "b" * 17 + " ") == ["a" * 17, "b" * 17]


@pytest.mark.parametrize("step", MARKDOWN_STEPS)
def test_a_link_to_nothing_is_no_link_and_md_goes_only_with_its_dot(step):
    (markdown,) = modules(step, "markdown")
    assert markdown.find_links("[x](#) [y](<>) [[#]]") == []
    targets = [link.target for link in markdown.find_links("[[Farmd]] [x](Farmd) [[Farm.md]]")]
    assert targets == ["Farmd", "Farmd", "Farm"]


# ---- frontmatter.py and notes.py ---------------------------------------------------------

FRONTMATTER_STEPS = distinct_copies("frontmatter.py", since=5)


@pytest.mark.parametrize("step", FRONTMATTER_STEPS)
def test_a_kept_block_scalar_at_the_end_of_the_properties_keeps_one_line_break(step):
    (frontmatter,) = modules(step, "frontmatter")
    assert frontmatter.parse_yaml("k: |+\n  a\n") == {"k": "a\n"}
    assert frontmatter.read_frontmatter("---\nk: |+\n  a\n---\nbody").data == {"k": "a\n"}


@pytest.mark.parametrize("step", FRONTMATTER_STEPS)
def test_only_top_level_properties_have_their_line_kept(step):
    (frontmatter,) = modules(step, "frontmatter")
    front = frontmatter.read_frontmatter("---\ntags: [t]\nmeta:\n  tags: [u]\n---\nbody")
    assert front.key_lines == {"tags": 2, "meta": 3}


@pytest.mark.parametrize("step", FRONTMATTER_STEPS)
def test_an_empty_value_tagged_as_text_is_empty_text_not_null(step):
    (frontmatter,) = modules(step, "frontmatter")
    assert frontmatter.parse_yaml("a: !!str\nb:\nc: !!str ''\n") == {"a": "", "b": None, "c": ""}


@pytest.mark.parametrize("step", FRONTMATTER_STEPS)
@pytest.mark.parametrize("line", ["@k: 1", "`k: 1", "%k: 1", "|k: 1", ">k: 1", "*k: 1", "? x: 1"])
def test_a_key_may_not_start_with_a_reserved_character(step, line):
    (frontmatter,) = modules(step, "frontmatter")
    with pytest.raises(frontmatter.YamlError):
        frontmatter.parse_yaml(line)


@pytest.mark.parametrize("step", FRONTMATTER_STEPS)
def test_a_question_mark_that_a_character_follows_starts_a_plain_key(step):
    (frontmatter,) = modules(step, "frontmatter")
    assert frontmatter.parse_yaml("?x: 1\n:y: 2") == {"?x": 1, ":y": 2}


@pytest.mark.parametrize("step", FRONTMATTER_STEPS)
def test_block_scalars_keep_their_last_line_break_only_when_they_have_text(step):
    (frontmatter,) = modules(step, "frontmatter")
    assert frontmatter.parse_yaml("k: |\n  a\nj: 1") == {"k": "a\n", "j": 1}  # more lines follow: its break stays
    assert frontmatter.parse_yaml("k: |\n\nj: 1\n") == {"k": "", "j": 1}  # no text: no break either


@pytest.mark.parametrize("step", FRONTMATTER_STEPS)
def test_quoted_text_over_two_lines_drops_the_spaces_before_the_break(step):
    (frontmatter,) = modules(step, "frontmatter")
    assert frontmatter.parse_yaml('k: "a  \n  b"\nj: \'c \t\n  d\'') == {"k": "a b", "j": "c d"}


@pytest.mark.parametrize("step", FRONTMATTER_STEPS)
def test_a_comment_may_follow_a_flow_list(step):
    (frontmatter,) = modules(step, "frontmatter")
    assert frontmatter.parse_yaml("k: [a, b] # two\nj: {x: 1}  #one") == {"k": ["a", "b"], "j": {"x": 1}}


@pytest.mark.parametrize("step", FRONTMATTER_STEPS)
def test_the_two_halves_of_a_character_join_at_both_ends_of_their_ranges(step):
    """JSON writes U+10000 as \\ud800\\udc00 and U+10FFFF as \\udbff\\udfff."""
    (frontmatter,) = modules(step, "frontmatter")
    assert frontmatter.parse_yaml('k: "\\ud800\\udc00 \\udbff\\udfff"') == {"k": "\U00010000 \U0010ffff"}
    assert frontmatter.parse_yaml('k: "\\U0010FFFF \\U00110000"') == {"k": "\U0010ffff \ufffd"}  # the last there is


@pytest.mark.parametrize("step", FRONTMATTER_STEPS)
def test_a_colon_inside_a_comment_makes_no_key(step):
    (frontmatter,) = modules(step, "frontmatter")
    assert frontmatter.parse_yaml("k: a #b: c") == {"k": "a"}
    with pytest.raises(frontmatter.YamlError):
        frontmatter.parse_yaml("k: 1\na #b: c")


@pytest.mark.parametrize("step", distinct_copies("notes.py", since=5))
def test_a_heading_with_a_caret_inside_is_a_heading_and_empty_list_items_are_dropped(step):
    (notes,) = modules(step, "notes")
    note = notes.parse_note("N", "---\naliases: a,, b\ncssclasses: x,,y\n---\n# Day^2\ntext ^id\n")
    assert note.section("Day^2") == "# Day^2\ntext ^id" and note.section("^id") == "text"
    assert note.aliases == ["a", "b"] and note.cssclasses == ["x", "y"]
    assert notes.parse_note("M", "---\naliases: [a, '', ' ']\n---\n").aliases == ["a"]


# ---- inbox.py ----------------------------------------------------------------------------

INBOX_STEPS = distinct_copies("inbox.py", since=8)


@pytest.mark.parametrize("step", INBOX_STEPS)
def test_a_title_loses_a_dot_md_at_its_end_and_nothing_else(step):
    (inbox,) = modules(step, "inbox")
    assert inbox.safe_file_name("Idea.md") == "Idea"
    assert inbox.safe_file_name("Idea.MD ") == "Idea"
    assert inbox.safe_file_name("Farmd") == "Farmd"


@pytest.mark.parametrize("step", INBOX_STEPS)
@pytest.mark.parametrize("tone", ["\U0001f3fb", "\U0001f3ff"], ids=["lightest", "darkest"])
def test_a_cut_never_leaves_an_emoji_without_its_skin_tone(step, tone):
    """Skin tones are U+1F3FB to U+1F3FF, both ends included."""
    (inbox,) = modules(step, "inbox")
    room = inbox.MAX_NAME_BYTES - 1
    start = "a" * (room - 4)
    assert inbox.safe_file_name(start + "\U0001f44d" + tone) == start  # the cut falls between the two


@pytest.mark.parametrize("step", INBOX_STEPS)
@pytest.mark.parametrize("tags", ["", 0, False, {}], ids=["empty string", "zero", "false", "empty object"])
def test_tags_that_are_no_list_are_refused_even_when_empty(step, tmp_path, tags):
    (inbox,) = modules(step, "inbox")
    with pytest.raises(inbox.InboxError, match="list"):
        inbox.create_note(tmp_path, "Inbox", "Idea", "x", tags)
    assert inbox.create_note(tmp_path, "Inbox", "Idea", "x", []) == "Inbox/Idea.md"


@pytest.mark.parametrize("step", INBOX_STEPS)
def test_a_tag_loses_one_hash_not_two(step, tmp_path):
    (inbox,) = modules(step, "inbox")
    assert inbox.create_note(tmp_path, "Inbox", "One", "x", ["#bread"]) == "Inbox/One.md"
    assert '"bread"' in (tmp_path / "Inbox" / "One.md").read_text()
    with pytest.raises(inbox.InboxError, match="not a tag"):
        inbox.create_note(tmp_path, "Inbox", "Two", "x", ["##bread"])


@pytest.mark.parametrize("step", INBOX_STEPS)
def test_a_note_with_no_tags_is_written_without_a_tags_property(step, tmp_path):
    (inbox,) = modules(step, "inbox")
    for name, tags in (("None", None), ("Empty", [])):
        inbox.create_note(tmp_path, "Inbox", name, "body", tags)
        text = (tmp_path / "Inbox" / f"{name}.md").read_text()
        assert text.startswith("---\ncreated: ") and "tags" not in text and text.endswith("---\n\nbody"), text


# ---- links.py ----------------------------------------------------------------------------

LINKS_STEPS = distinct_copies("links.py", since=8)


@pytest.mark.parametrize("step", LINKS_STEPS)
def test_a_name_of_exactly_the_longest_length_is_compared_in_one_unicode_spelling(step):
    (links,) = modules(step, "links")
    decomposed = "Cre\u0301me " + "a" * (links.MAX_NAME_CHARS - 7)
    assert len(decomposed) == links.MAX_NAME_CHARS
    assert links.key(decomposed) == "cr\u00e9me " + "a" * (links.MAX_NAME_CHARS - 7)
    assert links.key(decomposed + "a") == decomposed.lower() + "a"  # past it, only lowered


@pytest.mark.parametrize("step", LINKS_STEPS)
def test_a_note_whose_name_ends_in_md_without_the_dot_is_linked_by_it(step, tmp_path):
    vault_module, links = modules(step, "vault", "links")
    root = make_vault(tmp_path, {"Farmd.md": "", "Fa.md": "", "Home.md": "[[Farmd]] [[Farmd.md]]"})
    graph = links.LinkGraph.build(vault_module.Vault(root))
    assert [link.target for link in graph.outgoing("Home.md")] == ["Farmd.md", "Farmd.md"]


@pytest.mark.parametrize("step", LINKS_STEPS)
def test_a_name_prefers_the_linking_notes_own_folder_at_any_depth(step, tmp_path):
    vault_module, links = modules(step, "vault", "links")
    assert links.pick({"A/B/Note.md", "A/Note.md"}, "A/B/Home.md") == "A/B/Note.md"
    assert links.pick({"A/B/Note.md", "A/Note.md"}, "A/Home.md") == "A/Note.md"
    root = make_vault(tmp_path, {"A/B/Note.md": "", "A/Note.md": "", "A/B/Home.md": "[[Note]] [[./Note]] [[../Note]]"})
    graph = links.LinkGraph.build(vault_module.Vault(root))
    assert [link.target for link in graph.outgoing("A/B/Home.md")] == ["A/B/Note.md", "A/B/Note.md", "A/Note.md"]


@pytest.mark.parametrize("step", LINKS_STEPS)
def test_a_long_line_shown_around_a_link_is_marked_cut_only_where_it_is_cut(step, tmp_path):
    vault_module, links = modules(step, "vault", "links")
    tail = " words" * 60  # 360 characters after the link: the line is cut, at its end only
    root = make_vault(tmp_path, {"Target.md": "", "Start.md": "[[Target]]" + tail, "End.md": tail[1:] + " [[Target]]"})
    graph = links.LinkGraph.build(vault_module.Vault(root))
    contexts = {backlink.source: backlink.context for backlink in graph.backlinks("Target.md")}
    assert contexts["Start.md"].startswith("[[Target]]") and contexts["Start.md"].endswith("…")
    assert contexts["End.md"].startswith("…") and contexts["End.md"].endswith("[[Target]]")
    assert len(contexts["Start.md"]) == len(contexts["End.md"]) == links.CONTEXT_CHARS + 1


@pytest.mark.parametrize("step", LINKS_STEPS)
def test_the_unresolved_links_of_an_empty_path_are_no_note_not_the_whole_vault(step, tmp_path):
    vault_module, links = modules(step, "vault", "links")
    graph = links.LinkGraph.build(vault_module.Vault(make_vault(tmp_path, {"Home.md": "[[Nowhere]]"})))
    assert [link.link.target for link in graph.unresolved()] == ["Nowhere"]
    with pytest.raises(vault_module.NoteNotFound):
        graph.unresolved("")


# ---- embeds.py and related.py ------------------------------------------------------------

EMBEDS_STEPS = distinct_copies("embeds.py", since=8)


@pytest.mark.parametrize("step", EMBEDS_STEPS)
def test_an_empty_note_is_embedded_as_an_empty_quote(step, tmp_path):
    vault_module, links, embeds = modules(step, "vault", "links", "embeds")
    vault = vault_module.Vault(make_vault(tmp_path, {"Empty.md": "", "Home.md": "![[Empty]]\n"}))
    expander = embeds.Embeds(vault, links.LinkGraph.build(vault), 11)
    text = expander.expand("![[Empty]]\n", "Home.md", ("Home.md",))
    assert expander.not_shown == [] and text.startswith("> Embedded from Empty.md:"), (text, expander.not_shown)


@pytest.mark.parametrize("step", EMBEDS_STEPS)
def test_an_embed_that_fills_the_answer_exactly_is_shown_and_one_byte_more_is_not(step, tmp_path):
    vault_module, links, embeds = modules(step, "vault", "links", "embeds")
    vault = vault_module.Vault(make_vault(tmp_path, {"B.md": "x" * 50, "Home.md": "![[B]]"}))
    graph = links.LinkGraph.build(vault)
    cost = embeds.quoted_size("x" * 50, "B.md", 1) - len("![[B]]")  # what showing B adds to the answer
    for size, shown in ((vault_module.MAX_NOTE_BYTES - cost, True), (vault_module.MAX_NOTE_BYTES - cost + 1, False)):
        expander = embeds.Embeds(vault, graph, size)
        text = expander.expand("![[B]]", "Home.md", ("Home.md",))
        assert ("Embedded from B.md" in text) is shown and bool(expander.not_shown) is not shown, size


class FixedCosines:
    """A search index stand-in whose nearest chunks have the cosines given: 1.0 for the note's own."""

    def __init__(self, chunk_type, cosines: dict[str, float]):
        import threading
        self.lock = threading.Lock()
        paths = ["A.md", *cosines]
        self.chunks = [chunk_type(id=f"{path}#0", path=path, heading_path=[path], text="", title=path)
                       for path in paths]
        self.vectors = [type("Vector", (), {"numbers": lambda self: [1.0, 0.0]})()] * len(paths)
        self.rows_by_note = {path: [row] for row, path in enumerate(paths)}
        self.hits = [(1.0, 0)] + [(cosine, row) for row, cosine in enumerate(cosines.values(), 1)]

    def nearest(self, query, k, rows=None, exact=False):
        return self.hits[:k]


@pytest.mark.parametrize("step", distinct_copies("related.py", since=8))
def test_a_note_exactly_as_similar_as_the_least_similarity_counts_and_one_less_does_not(step, tmp_path):
    vault_module, links, related, index = modules(step, "vault", "links", "related", "index")
    least = related.MIN_SIMILARITY
    graph = links.LinkGraph.build(vault_module.Vault(make_vault(tmp_path, {"A.md": "", "B.md": "", "C.md": ""})))
    chunk_index = FixedCosines(index.Chunk, {"B.md": least, "C.md": least - 1e-9})
    found = related.related_notes(graph, type("VaultIndex", (), {"chunk_index": chunk_index})(), "A.md", 10)
    assert [(note.path, note.reasons) for note in found] == [("B.md", [f"similar content ({least:.2f})"])]


@pytest.mark.parametrize("step", distinct_copies("related.py", since=8))
def test_a_note_with_no_chunks_is_related_by_its_links_alone(step, tmp_path):
    from test_edges import ZeroEmbedder
    vault_module, links, related, index = modules(step, "vault", "links", "related", "index")
    graph = links.LinkGraph.build(vault_module.Vault(make_vault(tmp_path / "vault", {"A.md": "[[B]]", "B.md": "b"})))
    chunk = index.Chunk(id="B.md#0", path="B.md", heading_path=["B"], text="b", title="B")
    chunk_index = index.ChunkIndex.build(tmp_path / "index", ZeroEmbedder(), [chunk])  # A.md has no chunk
    found = related.related_notes(graph, type("VaultIndex", (), {"chunk_index": chunk_index})(), "A.md", 10)
    assert [(note.path, note.reasons) for note in found] == [("B.md", ["linked from it"])]


# ---- tools.py ----------------------------------------------------------------------------

def tool_result(tools, vault, name: str, index=None, **arguments) -> dict:
    """A tool called as the server calls it, with what each step's tools take."""
    context = vault
    if hasattr(tools, "Context"):
        fields = tools.Context.__dataclass_fields__
        given = {"vault": vault, "index": index, "inbox": "Inbox"}
        context = tools.Context(**{key: value for key, value in given.items() if key in fields})
    return tools.call_tool(tools.TOOLS[name], arguments, context)


@pytest.mark.parametrize("step", distinct_copies("tools.py", since=5))
def test_a_missing_heading_with_a_caret_inside_is_a_heading_not_a_block(step, tmp_path):
    vault_module, tools = modules(step, "vault", "tools")
    vault = vault_module.Vault(make_vault(tmp_path, {"Home.md": "# Day 1\ntext ^id1\n"}))
    heading = tool_result(tools, vault, "get_note", path="Home", heading="2^3")
    block = tool_result(tools, vault, "get_note", path="Home", heading="^id2")
    assert heading["isError"] and "no heading" in heading["content"][0]["text"]
    assert block["isError"] and "no block" in block["content"][0]["text"]


@pytest.mark.parametrize("step", distinct_copies("tools.py", since=5))
def test_a_link_says_only_the_parts_it_has(step, tmp_path):
    vault_module, tools = modules(step, "vault", "tools")
    home = '---\nup: "[[Index]]"\n---\n[[B]] [[B#Part|the part]]\n'
    vault = vault_module.Vault(make_vault(tmp_path, {"Home.md": home}))
    [up, plain, full] = tool_result(tools, vault, "get_note", path="Home")["structuredContent"]["links"]
    assert plain == {"target": "B", "line": 4, "embed": False}
    assert full == {"target": "B", "line": 4, "embed": False, "subpath": "Part", "display": "the part"}
    assert up == {"target": "Index", "line": 2, "embed": False, "property": "up"}


@pytest.mark.parametrize("step", distinct_copies("tools.py", since=8))
def test_a_note_whose_embeds_are_all_shown_lists_none_not_shown(step, tmp_path):
    vault_module, links, tools = modules(step, "vault", "links", "tools")
    notes = {"Home.md": "![[B]]\n", "B.md": "b text\n", "Other.md": "![[Nowhere]]\n"}
    vault = vault_module.Vault(make_vault(tmp_path, notes))
    graph = links.LinkGraph.build(vault)
    index = type("VaultIndex", (), {"link_graph": lambda self: graph})()
    shown = tool_result(tools, vault, "get_note", index=index, path="Home")["structuredContent"]
    assert "b text" in shown["text"] and "embedsNotShown" not in shown
    missing = tool_result(tools, vault, "get_note", index=index, path="Other")["structuredContent"]
    assert [item["embed"] for item in missing["embedsNotShown"]] == ["![[Nowhere]]"]


@pytest.mark.parametrize("step", distinct_copies("tools.py", since=8))
def test_backlinks_name_an_alias_only_for_the_unresolved_links_that_are_one(step, tmp_path):
    vault_module, links, tools = modules(step, "vault", "links", "tools")
    notes = {"Home.md": "[[Nowhere]] [[Bready]]", "Bread.md": "---\naliases: [Bready]\n---\n"}
    vault = vault_module.Vault(make_vault(tmp_path, notes))
    graph = links.LinkGraph.build(vault)
    index = type("VaultIndex", (), {"link_graph": lambda self: graph, "staleness": lambda self: {}})()
    result = tool_result(tools, vault, "get_backlinks", index=index, path="Home")["structuredContent"]
    assert result["unresolved"] == ["Bready", "Nowhere"] and result["aliasOf"] == {"Bready": "Bread.md"}
    plain = make_vault(tmp_path / "plain", {"Home.md": "[[Nowhere]]"})
    graph = links.LinkGraph.build(vault_module.Vault(plain))
    result = tool_result(tools, vault_module.Vault(plain), "get_backlinks", index=index, path="Home")
    result = result["structuredContent"]
    assert result["unresolved"] == ["Nowhere"] and "aliasOf" not in result


@pytest.mark.parametrize("step", distinct_copies("tools.py", since=7))
def test_a_reindex_reports_its_last_note_whatever_the_total(step):
    """45 notes: every second note is reported (45 // 20), and the 45th as well."""
    (tools,) = modules(step, "tools")
    total, heard = 45, []

    class Built:
        def note_paths(self):
            return ["A.md"] * total

        def __len__(self):
            return total

    class Index:
        def rebuild(self, progress, stop=None):
            for done in range(total + 1):
                progress(done, total)
            return Built()

        reindex = rebuild

    fields = tools.Context.__dataclass_fields__
    context = tools.Context(**{key: value for key, value in {
        "vault": None, "index": Index(), "inbox": "Inbox",
        "progress": lambda done, total=None, message=None: heard.append(done)}.items() if key in fields})
    assert tools.call_tool(tools.TOOLS["reindex"], {}, context)["isError"] is False
    assert heard[-1] == total and heard[:3] == [0, 2, 4]


# ---- index.py ----------------------------------------------------------------------------

INDEX_STEPS = distinct_copies("index.py", since=7)


@pytest.mark.parametrize("step", INDEX_STEPS)
def test_the_index_folder_may_be_neither_the_vault_nor_inside_it(step, tmp_path):
    (index,) = modules(step, "index")
    vault = make_vault(tmp_path / "vault", {"Home.md": ""})
    for inside in (vault, vault / "index"):
        with pytest.raises(ValueError, match="inside the vault"):
            index.default_index_dir(vault, override=inside)
    assert index.default_index_dir(vault, override=tmp_path / "vault-index") == (tmp_path / "vault-index").resolve()


@pytest.mark.parametrize("step", INDEX_STEPS)
def test_a_file_a_crash_left_beside_the_note_files_is_not_read(step, tmp_path):
    from test_edges import ZeroEmbedder
    (index,) = modules(step, "index")
    chunk = index.Chunk(id="Home.md#0", path="Home.md", heading_path=["Home"], text="home", title="Home")
    built = index.ChunkIndex.build(tmp_path, ZeroEmbedder(), [chunk])
    (built.notes_dir / (index.note_file_name("Half.md") + ".tmp")).write_text('{"cut sho')  # a write cut short
    loaded = index.ChunkIndex.load(tmp_path, ZeroEmbedder.name, ZeroEmbedder.dimension)
    assert loaded.note_paths() == ["Home.md"]


@pytest.mark.parametrize("step", INDEX_STEPS)
def test_a_generation_folder_named_with_exactly_the_longest_name_is_loaded_and_one_longer_is_not(step, tmp_path):
    from test_edges import ZeroEmbedder
    (index,) = modules(step, "index")
    chunk = index.Chunk(id="Home.md#0", path="Home.md", heading_path=["Home"], text="home", title="Home")
    built = index.ChunkIndex.build(tmp_path, ZeroEmbedder(), [chunk])
    manifest_file = tmp_path / index.MANIFEST
    folder = built.notes_dir
    for length, loads in ((64, True), (65, False)):
        name = "notes-" + "x" * (length - 6)
        folder = folder.rename(tmp_path / name)
        manifest_file.write_text(json.dumps(json.loads(manifest_file.read_text()) | {"generation": name}))
        if loads:
            loaded = index.ChunkIndex.load(tmp_path, ZeroEmbedder.name, ZeroEmbedder.dimension)
            assert loaded.note_paths() == ["Home.md"]
        else:
            with pytest.raises(index.IndexCorrupt):
                index.ChunkIndex.load(tmp_path, ZeroEmbedder.name, ZeroEmbedder.dimension)


@pytest.mark.parametrize("step", INDEX_STEPS)
def test_a_generation_folder_must_be_named_notes_and_a_dash(step, tmp_path):
    from test_edges import ZeroEmbedder
    (index,) = modules(step, "index")
    chunk = index.Chunk(id="Home.md#0", path="Home.md", heading_path=["Home"], text="home", title="Home")
    built = index.ChunkIndex.build(tmp_path, ZeroEmbedder(), [chunk])
    built.notes_dir.rename(tmp_path / "notesX")
    manifest_file = tmp_path / index.MANIFEST
    manifest_file.write_text(json.dumps(json.loads(manifest_file.read_text()) | {"generation": "notesX"}))
    with pytest.raises(index.IndexCorrupt):
        index.ChunkIndex.load(tmp_path, ZeroEmbedder.name, ZeroEmbedder.dimension)


@pytest.mark.parametrize("step", INDEX_STEPS)
def test_a_build_reports_each_note_once_and_an_empty_build_once(step, tmp_path):
    from test_edges import ZeroEmbedder
    (index,) = modules(step, "index")
    chunks = [index.Chunk(id=f"{name}#0", path=name, heading_path=[name], text=name, title=name)
              for name in ("A.md", "B.md")]
    for folder, given, expected in (("two", chunks, [(0, 2), (1, 2), (2, 2)]), ("none", [], [(0, 0)])):
        heard = []
        index.ChunkIndex.build(tmp_path / folder, ZeroEmbedder(), given,
                               progress=lambda done, total: heard.append((done, total)))
        assert heard == expected, folder


@pytest.mark.parametrize("step", distinct_copies("index.py", since=10))
def test_a_note_without_chunks_stored_with_empty_meta_is_kept_on_disk_and_in_memory(step, tmp_path):
    """An empty note's meta {} is meta: the note has a file, so that reconcile knows it."""
    from test_edges import ZeroEmbedder
    (index,) = modules(step, "index")
    built = index.ChunkIndex.build(tmp_path / "disk", ZeroEmbedder(), [], meta={"Empty.md": {}})
    assert built.note_meta() == {"Empty.md": {}}
    assert index.ChunkIndex.load(tmp_path / "disk", ZeroEmbedder.name, ZeroEmbedder.dimension).note_meta() == {
        "Empty.md": {}}
    in_memory = index.ChunkIndex.write_new(tmp_path / "memory", ZeroEmbedder(), [("Empty.md", [], [], {})], 1,
                                           writable=False)
    assert in_memory.note_meta() == {"Empty.md": {}}


@pytest.mark.parametrize("step", distinct_copies("index.py", since=10))
def test_the_index_of_the_last_other_embedder_is_kept_and_an_older_one_only_when_no_server_uses_it(step, tmp_path):
    import os
    (index,) = modules(step, "index")
    folders = {name: index.open_embedder_folder(tmp_path, name) for name in ("old", "recent")}
    for age, name in enumerate(("recent", "old"), 1):  # "old" was used longest ago
        os.utime(folders[name] / index.LAST_USED, (1_000_000 - age * 1000,) * 2)
    in_use = index.writer_lock(folders["old"])  # another server writes it
    try:
        index.open_embedder_folder(tmp_path, "now")
        assert folders["old"].is_dir() and folders["recent"].is_dir()
    finally:
        in_use.close()
    index.open_embedder_folder(tmp_path, "now")
    assert folders["recent"].is_dir() and not folders["old"].exists()  # KEEP_EMBEDDERS: "now" and "recent"


@pytest.mark.parametrize("step", INDEX_STEPS)
def test_an_empty_folder_or_tag_filter_is_no_filter(step, tmp_path):
    from test_index_in_every_copy import opened
    _, vault_index = opened(step, tmp_path)
    everywhere = [hit.path for hit in vault_index.search("cabbage", 5)]
    assert everywhere
    for folder, tag in (("", None), ("/", None), (None, ""), (None, "#"), ("/", "#")):
        found = [hit.path for hit in vault_index.search("cabbage", 5, folder=folder, tag=tag)]
        assert found == everywhere, (folder, tag)


# ---- vault_index.py, search.py, keyword_index.py, vector_search.py, stored_keywords.py, parallel_build.py ----

@pytest.mark.parametrize("step", distinct_copies("vault_index.py", since=7))
def test_a_heading_of_exactly_the_longest_length_is_kept_whole_in_its_chunks(step, tmp_path):
    from helpers import note_chunks
    vault_module, vault_index = modules(step, "vault", "vault_index")
    longest = "H" * vault_index.CONTEXT_CHARS
    root = make_vault(tmp_path / "vault", {"Long.md": f"# {longest}\ntext\n\n# {longest}I\nmore\n"})
    chunks = note_chunks(vault_index.VaultIndex(vault_module.Vault(root), None, tmp_path / "index"), "Long.md")
    assert [chunk.heading_path[1:] for chunk in chunks] == [[longest], [longest]]  # the second cut to the limit


@pytest.mark.parametrize("step", distinct_copies("search.py", since=7))
def test_the_kind_of_an_embedder_is_the_first_part_of_its_name(step):
    (search,) = modules(step, "search")
    names = ("hash-512", "static-minilm-256-5f1a", "ollama/nomic-embed-text")
    assert [search.embedder_kind(name) for name in names] == ["hash", "static", "model"]


@pytest.mark.parametrize("step", distinct_copies("search.py", since=7))
def test_a_snippet_window_ends_before_its_length_and_a_word_at_the_end_is_kept_whole(step):
    (search, keyword_index) = modules(step, "search", "keyword_index")
    length = search.SNIPPET_LENGTH
    # "omega" starts exactly `length` after the first "alpha": outside that window, so the
    # window from "omega" (which holds both words) wins, and the snippet starts inside the text
    text = "alpha " + "z" * (length - 7) + " omega " + "q" * 93 + " alpha omega end"
    assert text.index("omega") == length
    assert search.snippet(text, keyword_index.tokenize("alpha omega")).startswith("…")
    whole = "a " * (length // 2 - 1) + "abcdefghij"  # the cut falls inside the last word
    assert search.snippet(whole, []) == " ".join(whole.split())
    assert search.snippet("short text", []) == "short text"  # all of it: no mark at either end
    assert search.snippet("a" * 50 + " alpha", ["alpha"]) == "a" * 50 + " alpha"  # back to the start of the word


@pytest.mark.parametrize("step", distinct_copies("keyword_index.py", since=7))
def test_short_words_keep_their_last_letters(step):
    """pies -> pie (not py), bees -> bee (not be): a word of four letters loses only its -s."""
    (keyword_index,) = modules(step, "keyword_index")
    assert [keyword_index.normal_form(word) for word in ("pies", "ties", "bees", "toes", "berries", "cats", "cat")] == [
        "pie", "tie", "bee", "toe", "berry", "cat", "cat"]
    assert keyword_index.KeywordIndex().scores(["cat"]) == {}  # an empty index scores nothing


@pytest.mark.parametrize("step", distinct_copies("vector_search.py", since=7))
def test_a_stored_step_of_exactly_the_largest_size_is_read_and_a_larger_one_is_not(step):
    import math
    (vector_search,) = modules(step, "vector_search")
    largest = vector_search.MAX_STEP
    assert vector_search.check_step(largest) == largest and vector_search.check_step(0.0) == 0.0
    with pytest.raises(ValueError):
        vector_search.check_step(math.nextafter(largest, 1.0))


@pytest.mark.parametrize("step", distinct_copies("vector_search.py", since=7))
def test_asking_for_more_neighbours_than_the_shortlist_holds_finds_them_all(step):
    (vector_search,) = modules(step, "vector_search")
    # row n differs from the query in the sign of n of its 8 numbers: its sketch is n bits away
    vectors = [vector_search.quantize(vector_search.unit_vector([1.0] * (8 - n) + [-1.0] * n)) for n in range(6)]
    sketches = [vector_search.sketch(vector.codes) for vector in vectors]
    found = vector_search.nearest_sketched([1.0] * 8, vectors, sketches, None, 5, shortlist=2)
    assert [row for _, row in found] == [0, 1, 2, 3, 4]  # the five nearest, best first


@pytest.mark.parametrize("step", distinct_copies("stored_keywords.py", since=10))
def test_stored_postings_that_name_one_row_past_the_last_are_not_used(step, tmp_path):
    from array import array
    (stored_keywords,) = modules(step, "stored_keywords")
    stamp = [1, 2, 3]
    for rows, fits in (([0], True), ([1], False)):  # one note of one chunk: row 0 only
        keywords = stored_keywords.KeywordIndex()
        keywords.lengths, keywords.total_length = {0: 1}, 1
        keywords.postings = {"bread": (array("I", rows), array("I", [1]))}
        with open(tmp_path / stored_keywords.FILE, "wb") as handle:
            stored_keywords.write_copy(handle, keywords, [("A.md", [0])], [stamp])
        copy = stored_keywords.read_copy(tmp_path)
        assert (stored_keywords.fit(copy, {"A.md": [0]}, {"A.md": stamp}) is not None) is fits, rows


@pytest.mark.parametrize("step", distinct_copies("parallel_build.py", since=7))
@pytest.mark.parametrize("cores", [2, 8])
def test_exactly_parallel_from_notes_get_workers_and_one_note_less_gets_none(step, cores, monkeypatch):
    import os
    (parallel_build,) = modules(step, "parallel_build")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    if not getattr(parallel_build, "FORK_IS_SAFE", True):
        pytest.skip("this system does not fork a server's workers")
    assert parallel_build.worker_count(parallel_build.PARALLEL_FROM) == min(parallel_build.MAX_WORKERS, cores)
    assert parallel_build.worker_count(parallel_build.PARALLEL_FROM - 1) == 0


# ---- reconcile.py ------------------------------------------------------------------------

RECONCILE_STEPS = distinct_copies("reconcile.py", since=10)


def old_notes(root, notes: dict[str, str], seconds_ago: int = 60):
    """Notes written with a modification time old enough for a stamp to trust."""
    import os
    import time
    make_vault(root, notes)
    old = time.time_ns() - seconds_ago * 10**9
    for path in notes:
        os.utime(root / path, ns=(old, old))
    return root


@pytest.mark.parametrize("step", RECONCILE_STEPS)
def test_notes_stored_with_empty_meta_or_without_links_are_reconciled_as_such(step, tmp_path):
    """An index of steps 7 to 9 stored no meta ({}): an edited note is CHANGED, not NEW, and a
    note gone is REMOVED; a note whose stamp is stored without its links is read for them."""
    import os
    from test_edges import ZeroEmbedder
    vault_module, vault_index_module, reconcile = modules(step, "vault", "vault_index", "reconcile")
    root = old_notes(tmp_path / "vault", {"A.md": "# A\n\nfirst\n", "C.md": "# C\n\nc\n", "D.md": "# D\n\n[[A]]\n"})

    def start():
        return vault_index_module.VaultIndex(vault_module.Vault(root), ZeroEmbedder(), tmp_path / "index")

    first = start()
    first.rebuild()
    reconcile.reconcile(first)
    stamped = first.chunk_index.meta_of("D.md")
    first.chunk_index.set_meta("A.md", {})
    first.chunk_index.set_meta("D.md", {key: value for key, value in stamped.items() if key != "links"})
    old_notes(root, {"A.md": "# A\n\nsecond\n"}, seconds_ago=50)

    again = start()
    report = reconcile.reconcile(again)
    assert (report.new, report.changed) == (0, 1), str(report)
    assert "D.md" in again.links and [link.source for link in again.links.backlinks("A.md")] == ["D.md"]
    again.chunk_index.set_meta("C.md", {})
    os.unlink(root / "C.md")
    assert reconcile.refresh_note(again, "C.md") == reconcile.REMOVED


@pytest.mark.parametrize("step", RECONCILE_STEPS)
def test_an_excluded_note_unchanged_while_stopped_is_not_read_again(step, tmp_path):
    from test_edges import ZeroEmbedder
    vault_module, vault_index_module, reconcile = modules(step, "vault", "vault_index", "reconcile")
    root = old_notes(tmp_path / "vault", {".obsidian/app.json": '{"userIgnoreFilters": ["Archive/"]}',
                                          "Archive/Old.md": "# Old\n\nold\n", "Home.md": "# Home\n\n[[Old]]\n"})

    def start():
        return vault_index_module.VaultIndex(vault_module.Vault(root), ZeroEmbedder(), tmp_path / "index")

    first = start()
    first.rebuild()
    reconcile.reconcile(first)
    report = reconcile.reconcile(start())
    assert (report.unchanged, report.touched) == (2, 0), str(report)


# ---- excluded_files.py and watcher.py ----------------------------------------------------

@pytest.mark.parametrize("step", distinct_copies("excluded_files.py", since=10))
def test_a_filter_with_a_stray_closing_parenthesis_is_skipped_and_the_others_kept(step, tmp_path):
    (vault_module,) = modules(step, "vault")
    settings = {"userIgnoreFilters": ["/a)(b/", "", "//", "Archive"]}
    root = make_vault(tmp_path, {".obsidian/app.json": json.dumps(settings), "Archive/Old.md": "", "Home.md": "",
                                 "a)(b.md": ""})
    assert vault_module.Vault(root).list_notes() == ["Home.md", "a)(b.md"]


@pytest.mark.parametrize("step", distinct_copies("excluded_files.py", since=10))
def test_a_filter_matches_a_path_in_either_unicode_spelling_and_a_repeated_repeat_is_skipped(step, tmp_path):
    (vault_module,) = modules(step, "vault")
    settings = {"userIgnoreFilters": ["Priv\u00e9/", "/(a+){2,}x/"]}
    root = make_vault(tmp_path, {".obsidian/app.json": json.dumps(settings), "Prive\u0301/Note.md": "",
                                 "aax.md": "", "Home.md": ""})
    assert vault_module.Vault(root).list_notes() == ["Home.md", "aax.md"]


@pytest.mark.parametrize("step", distinct_copies("watcher.py", since=9))
def test_a_removal_that_fails_is_tried_once_and_logged(step, tmp_path, caplog):
    import threading
    vault_module, watcher_module = modules(step, "vault", "watcher")
    root = make_vault(tmp_path, {"Home.md": "", "Gone.md": ""})
    removals, done = [], threading.Event()

    def on_remove(path):
        removals.append(path)
        raise OSError("the index is on a disk that went away")

    watcher = watcher_module.Watcher(vault_module.Vault(root), on_index=lambda path: None, on_remove=on_remove,
                                     on_note_changed=lambda path: done.set(), poll_interval=0.01, debounce=0)
    watcher.start()
    try:
        (root / "Gone.md").unlink()
        assert done.wait(10), "the watcher never ran the removal"
    finally:
        watcher.stop()
    assert removals == ["Gone.md"]
    assert "could not remove Gone.md" in caplog.text


@pytest.mark.parametrize("step", distinct_copies("watcher.py", since=9))
def test_a_note_moved_over_another_is_that_one_changed_and_itself_deleted_not_a_rename(step):
    (watcher,) = modules(step, "watcher")
    moved = watcher.Stamp(size=10, mtime_ns=5, inode=1, names=1)
    before = {"A.md": moved, "B.md": watcher.Stamp(size=3, mtime_ns=4, inode=2, names=1)}
    changes = watcher.compare(before, {"B.md": moved})
    assert (changes.changed, changes.deleted, changes.renamed) == (["B.md"], ["A.md"], [])
    renamed = watcher.compare(before, {"B.md": before["B.md"], "C.md": moved})
    assert (renamed.created, renamed.deleted, renamed.renamed) == ([], [], [("A.md", "C.md")])


# ---- request_log.py and schema.py --------------------------------------------------------

@pytest.mark.parametrize("step", distinct_copies("request_log.py", since=4))
def test_the_log_names_an_empty_path_or_uri_and_a_missing_tool_name(step, caplog):
    from helpers import rpc
    (request_log,) = modules(step, "request_log")
    caplog.set_level(logging.INFO, logger="request")
    answer = {"jsonrpc": "2.0", "id": 1, "result": {}}
    request_log.log_request(rpc("tools/call", name="get_note", arguments={"path": ""}), answer, 0.001)
    request_log.log_request(rpc("resources/read", uri=""), answer, 0.001)
    request_log.log_request(rpc("tools/call", arguments={}), answer, 0.001)
    lines = [record.getMessage() for record in caplog.records]
    assert 'path=""' in lines[0] and 'uri=""' in lines[1] and "tool=(none)" in lines[2], lines


@pytest.mark.parametrize("step", distinct_copies("schema.py", since=4))
def test_a_wrong_value_is_shown_whole_up_to_the_limit_and_cut_to_it_past(step):
    (schema,) = modules(step, "schema")
    fits = "v" * 58  # 60 characters once quoted
    [whole] = schema.validate({"type": "integer"}, fits)
    [cut] = schema.validate({"type": "integer"}, fits + "w")
    assert f'"{fits}"' in whole and f'"{fits}…' in cut and fits + "w" not in cut


# ---- stdio_transport.py ------------------------------------------------------------------

STDIO_STEPS = distinct_copies("stdio_transport.py", since=4)


def line(message) -> bytes:
    return json.dumps(message).encode() + b"\n"


@pytest.mark.parametrize("step", STDIO_STEPS)
def test_stdio_answers_nothing_to_a_blank_line_nor_to_a_batch_of_notifications(step):
    from test_http_door_limits import stdio_exchange
    handshake = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                            "clientInfo": {"name": "t", "version": "1"}}}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    answers = stdio_exchange(find_step(step), [
        b"   \n", b"\t\r\n", line(handshake), line(initialized),
        line([{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}]),
        line({"jsonrpc": "2.0", "id": 2, "method": "ping"})])
    assert [answer.get("id") for answer in answers] == [1, 2], answers


# ---- http_transport.py -------------------------------------------------------------------

HTTP_STEPS = distinct_copies("http_transport.py", since=4)


@pytest.mark.parametrize("step", HTTP_STEPS)
def test_media_types_in_accept_may_carry_parameters(step_servers, step):
    from helpers import CLIENT_INFO, rpc
    client = step_servers(step)
    initialize = rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO)
    reply = client.post(initialize, {"Accept": "application/json; q=0.9, text/event-stream;q=0.5"})
    assert reply.status == 200 and reply.json()["result"]["protocolVersion"] == "2025-11-25"


def raw_status(client, request: bytes) -> int:
    import socket
    with socket.create_connection((client.host, client.port), timeout=10) as sock:
        sock.sendall(request)
        return int(sock.recv(1024).split(b" ", 2)[1])


def initialize_request(client, path: str = "/mcp", hosts: int = 1) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()
    head = f"POST {path} HTTP/1.1\r\n" + f"Host: 127.0.0.1:{client.port}\r\n" * hosts
    head += ("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
             f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    return head.encode() + body


@pytest.mark.parametrize("step", HTTP_STEPS)
def test_the_endpoint_is_mcp_exactly_and_a_request_names_one_host(step_servers, step):
    client = step_servers(step)
    assert raw_status(client, initialize_request(client)) == 200
    assert raw_status(client, initialize_request(client, "/mcp?from=here")) == 200  # a query is no other path
    for path in ("/mcpx", "/mcp/", "/mcp/sub"):
        assert raw_status(client, initialize_request(client, path)) == 404, path
    assert raw_status(client, initialize_request(client, hosts=2)) == 403


def body_one_byte_short(client) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{client.port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body) + 1}\r\n\r\n").encode() + body


@pytest.mark.parametrize("step", HTTP_STEPS)
def test_a_body_one_byte_shorter_than_its_length_is_refused(step_servers, step):
    import socket
    client = step_servers(step)
    with socket.create_connection((client.host, client.port), timeout=10) as sock:
        sock.sendall(body_one_byte_short(client))
        sock.shutdown(socket.SHUT_WR)  # the byte never comes
        assert sock.recv(1024).startswith(b"HTTP/1.1 400")


@pytest.mark.parametrize("step", HTTP_STEPS)
def test_an_empty_session_id_on_delete_or_get_names_no_session(step_servers, step):
    client = step_servers(step)
    for method in ("DELETE", "GET"):
        reply = client.request(method, headers={"Mcp-Session-Id": "", "Accept": "text/event-stream"})
        assert reply.status == 404 or (method == "GET" and reply.status == 405), (method, reply.status)
    assert client.request("DELETE", headers={"Mcp-Session-Id": ""}).status == 404


@pytest.mark.parametrize("step", HTTP_STEPS)
def test_an_empty_version_header_on_delete_or_get_is_the_stateless_era_and_204_carries_no_length(step_servers, step):
    client = step_servers(step)
    for method in ("DELETE", "GET"):
        reply = client.request(method, headers={"MCP-Protocol-Version": "", "Accept": "text/event-stream"})
        assert reply.status == 405 and reply.headers["Allow"] == "POST", (method, reply.status)
    session_id = client.open_session()
    ended = client.request("DELETE", headers={"Mcp-Session-Id": session_id})
    assert ended.status == 204 and "Content-Length" not in ended.headers and ended.body == b""


@pytest.mark.parametrize("step", HTTP_STEPS)
def test_a_request_refused_with_400_is_logged_at_info(step):
    import time
    from test_http_door_limits import server
    with server(find_step(step)) as (client, port, log_path):
        assert client.post(b"{not json").status == 400
        deadline = time.monotonic() + 10
        while '" 400' not in log_path.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert '"POST /mcp HTTP/1.1" 400' in log_path.read_text()


@pytest.mark.parametrize("step", HTTP_STEPS)
def test_a_host_may_be_a_bracketed_ipv6_address(step_servers, step):
    from helpers import CLIENT_INFO, rpc
    client = step_servers(step)
    initialize = rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO)
    assert client.post(initialize, {"Host": f"[::1]:{client.port}"}).status == 200
    assert client.post(initialize, {"Host": f"[::2]:{client.port}"}).status == 403


@pytest.mark.parametrize("step", HTTP_STEPS)
def test_a_routing_header_sent_twice_is_a_mismatch_even_when_both_agree(step_servers, step):
    from test_streams_every_copy import STATELESS_META
    client = step_servers(step)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": STATELESS_META}}).encode()
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{client.port}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            "Mcp-Method: tools/list\r\n{}Content-Length: {}\r\nConnection: close\r\n\r\n")
    assert raw_status(client, head.format("", len(body)).encode() + body) == 200
    assert raw_status(client, head.format("Mcp-Method: tools/list\r\n", len(body)).encode() + body) == 400


@pytest.mark.parametrize("step", HTTP_STEPS)
def test_a_name_header_that_only_starts_like_base64_is_taken_as_written(step_servers, step):
    """Mcp-Name is decoded only when it is =?base64?...?= whole; "=?base64?Zm9v" is a name."""
    from test_streams_every_copy import STATELESS_META
    client = step_servers(step)
    uri = "=?base64?Zm9v"
    message = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri, "_meta": STATELESS_META}}
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read", "Mcp-Name": uri}
    reply = client.post(message, headers)
    assert reply.json()["error"]["code"] == -32602, reply.json()  # no such note; the headers agree with the body


# ---- protocol.py -------------------------------------------------------------------------

PROTOCOL_STEPS = distinct_copies("protocol.py", since=4)


@pytest.mark.parametrize("step", [step for step in distinct_copies("protocol.py", since=10)
                                  if "UnderWay" in (find_step(step).path / "protocol.py").read_text()])
@pytest.mark.parametrize("request_id", [0, ""], ids=["zero", "empty"])
def test_a_request_with_id_0_or_empty_string_can_be_cancelled(step, request_id):
    (protocol,) = modules(step, "protocol")
    server = protocol.Server(vault=None, index=None)
    session = protocol.Session(protocol_version="2025-11-25", initialized=True)
    with server.under_way.request(session, request_id) as cancelled:
        server.handle({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}},
                      session)
        assert cancelled.is_set()


@pytest.mark.parametrize("step", [step for step in PROTOCOL_STEPS if step >= 7])
def test_progress_needs_a_token_that_is_no_boolean_grows_and_says_no_empty_message(step):
    (protocol,) = modules(step, "protocol")
    sent = []
    protocol.Progress({"_meta": {"progressToken": True}}, sent.append)(1, 2)
    assert sent == []  # True is no token
    progress = protocol.Progress({"_meta": {"progressToken": "t"}}, sent.append)
    progress(1, 2, "")
    progress(1, 2, "again")  # no growth: not sent
    progress(2, 2, "done")
    params = [message["params"] for message in sent]
    assert params == [{"progressToken": "t", "progress": 1, "total": 2},
                      {"progressToken": "t", "progress": 2, "total": 2, "message": "done"}], params


@pytest.mark.parametrize("step", PROTOCOL_STEPS)
def test_an_empty_batch_is_refused(step_servers, step):
    from helpers import rpc
    client = step_servers(step)
    session_id = client.initialize("2025-03-26").headers["Mcp-Session-Id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.post(initialized, {"Mcp-Session-Id": session_id}).status == 202
    reply = client.post([], {"Mcp-Session-Id": session_id})
    assert reply.status == 400 and reply.json()["error"]["code"] == -32600
    assert client.post([rpc("ping", id=1)], {"Mcp-Session-Id": session_id}).status == 200


@pytest.mark.parametrize("step", [step for step in PROTOCOL_STEPS if step >= 9])
def test_a_listen_agrees_to_list_changes_only_when_asked_with_true(step):
    from test_streams_every_copy import STATELESS_META
    (protocol,) = modules(step, "protocol")
    server = protocol.Server(vault=None, index=None)
    for asked, agreed in ((1, {}), ("true", {}), (True, {"resourcesListChanged": True})):
        sent = []
        listen = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                  "params": {"_meta": STATELESS_META, "notifications": {"resourcesListChanged": asked}}}
        server.hub.remove(server.listen(listen, sent.append))
        assert sent[0]["params"]["notifications"] == agreed, asked


# ---- the embedders: hash_embedder.py, ollama_client.py, wordpiece.py ---------------------

@pytest.mark.parametrize("step", distinct_copies("hash_embedder.py", since=6))
def test_a_word_gives_every_piece_to_its_last_letter_and_two_numbers_are_the_fewest(step):
    (hash_embedder,) = modules(step, "hash_embedder")
    assert sorted(hash_embedder.pieces("rye")) == sorted(["c:<ry", "c:rye", "c:ye>", "c:<rye", "c:rye>", "c:<rye>"])
    assert len(hash_embedder.HashEmbedder(2).embed_query("rye bread")) == 2
    with pytest.raises(ValueError):
        hash_embedder.HashEmbedder(1)


@pytest.mark.parametrize("step", distinct_copies("ollama_client.py", since=6))
def test_an_ollama_port_is_1_to_65535_both_included(step):
    (ollama_client,) = modules(step, "ollama_client")
    assert ollama_client.ollama_url("box:65535") == "http://box:65535"
    assert ollama_client.ollama_url("box:1") == "http://box:1"
    for port in ("65536", "0"):
        with pytest.raises(ollama_client.OllamaError, match="port"):
            ollama_client.ollama_url(f"box:{port}")


@pytest.mark.parametrize("step", distinct_copies("ollama_client.py", since=6))
def test_an_empty_vector_from_ollama_is_refused_and_its_words_are_shown_whole_up_to_the_limit(step, stand_in):
    from test_embeddings import Answer, vectors_answer
    (ollama_client,) = modules(step, "ollama_client")
    ollama = ollama_client.OllamaEmbedder(stand_in.url, backoff=0.01, timeout=5, attempts=1)
    stand_in.script = [vectors_answer([[1.0, 2.0], []])]
    with pytest.raises(ollama_client.OllamaError):
        ollama.embed_documents(["a", "b"])
    for words, shown in (("w" * 120, "w" * 120), ("w" * 121, "w" * 120 + "...")):
        stand_in.script = [Answer(400, {"error": words})]
        with pytest.raises(ollama_client.OllamaError) as refused:
            ollama.embed_documents(["a"])
        assert f"{shown}" in str(refused.value) and words + "." not in str(refused.value)


@pytest.mark.parametrize("step", distinct_copies("wordpiece.py", since=6))
@pytest.mark.parametrize("char", ["`", "~"] + [chr(code) for low, high in [
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)] for code in (low, high)],
    ids=lambda char: f"U+{ord(char):04X}")
def test_punctuation_and_ideographs_at_both_ends_of_their_ranges_are_words_of_their_own(step, char):
    """Among letters that are not ASCII, where each character is judged alone."""
    import unicodedata
    (wordpiece,) = modules(step, "wordpiece")
    zhe = "\u0436"  # a Cyrillic letter
    assert wordpiece.words(f"{zhe}{zhe}{char}{zhe}") == [zhe + zhe, unicodedata.normalize("NFD", char), zhe]
