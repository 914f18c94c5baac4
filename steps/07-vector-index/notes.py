"""One note, read whole: parse_note(title, text) gives its properties, tags, links and outline.

It puts frontmatter.py (the properties) and markdown.py (the body) together and adds
what needs both: Obsidian's default properties `tags`, `aliases` and `cssclasses`,
read as lists whatever form they were written in; the tags of a note, from its
properties and its body; the links written in property values.
"""
import re
from dataclasses import dataclass

from frontmatter import read_frontmatter
from markdown import (
    Block,
    Chunk,
    Heading,
    Link,
    Section,
    Tag,
    chunk_sections,
    find_blocks,
    find_headings,
    find_links,
    find_tags,
    is_tag_name,
    mask,
    section_text,
    split_sections,
    tag_with_parents,
    wikilinks_in,
)


@dataclass
class Note:
    title: str  # the file name without ".md"
    frontmatter: dict  # the properties as written; {} when none or malformed
    frontmatter_error: str  # why the frontmatter was not read; "" when it was (or there is none)
    body: str  # the text after the frontmatter
    body_line: int  # the line of the note where the body starts
    tags: list[Tag]  # each tag once (compared without case), properties first, then the body
    aliases: list[str]
    cssclasses: list[str]
    links: list[Link]  # those in properties first, then the body's in order
    outline: list[Heading]
    sections: list[Section]
    blocks: list[Block]  # the paragraphs, list items, quotes and tables given an ^id

    def section(self, subpath: str) -> str | None:
        """The text under a heading ("Day 2" or "Day 2#Timing"), subsections included, or
        the block a link's "^id" names; None when there is none."""
        if subpath.startswith("^"):
            wanted = subpath[1:].lower()  # ids compare without case, as headings do
            return next((block.text for block in self.blocks if block.id.lower() == wanted), None)
        return section_text(self.body, subpath)

    def tag_keys(self) -> set[str]:
        """Every tag of the note, lowercased, with the parents of nested ones: a/b gives a and a/b."""
        return {key for tag in self.tags for key in tag_with_parents(tag.key)}

    def chunks(self, max_chars: int = 2000) -> list[Chunk]:
        """The body in pieces that each stand alone, for a search index."""
        return chunk_sections(self.title, self.sections, max_chars)


# region parse-note
def parse_note(title: str, text: str) -> Note:
    """Read a note the way Obsidian does. Never raises for any text."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    front = read_frontmatter(text)
    properties, first, key_lines = front.data, front.body_line, front.key_lines
    tags_line = key_lines.get("tags", 1)
    tags = [Tag(name, line=tags_line, in_frontmatter=True) for name in property_tags(properties)]
    body, masked = front.body, mask(front.body)  # masked once, searched five times
    return Note(
        title=title,
        frontmatter=properties,
        frontmatter_error=front.error,
        body=body,
        body_line=first,
        tags=unique_tags(tags + find_tags(body, first, masked)),
        aliases=alias_list(properties.get("aliases")),
        cssclasses=property_list(properties.get("cssclasses"), COMMAS_AND_SPACES),
        links=property_links(properties, key_lines) + find_links(body, first, masked),
        outline=find_headings(body, first, masked),
        sections=split_sections(body, first, masked),
        blocks=find_blocks(body, first, masked),
    )
# endregion parse-note


COMMAS = r","  # an alias may hold spaces: "aliases: Bulk, First rise"
COMMAS_AND_SPACES = r"[,\s]+"  # a tag or class cannot: "tags: a, b" or "tags: a b"


def property_list(value, separators: str) -> list[str]:
    """A default property as a list of text, whatever form it was written in.

    `tags: a, b`, `tags: [a, b]` and a block list all give ["a", "b"]: text is split
    at the `separators` (a regular expression). Numbers become text; anything else
    (a map, true, null) gives nothing.
    """
    items = value if isinstance(value, list) else [value]
    result = []
    for item in items:
        if isinstance(item, (str, int, float)) and not isinstance(item, bool):
            result += [part.strip() for part in re.split(separators, str(item)) if part.strip()]
    return result


def alias_list(value) -> list[str]:
    """Aliases, like tags, may be a text split at commas; but an alias may hold a comma
    itself, so each item of a list is kept whole (`aliases: ["Doe, Jane"]` is one)."""
    if not isinstance(value, list):
        return property_list(value, COMMAS)
    texts = [str(item).strip() for item in value if isinstance(item, (str, int, float)) and not isinstance(item, bool)]
    return [text for text in texts if text]


def property_tags(properties: dict) -> list[str]:
    """The tag names in `tags`, in any form; a leading # is dropped, invalid names too."""
    names = (name.lstrip("#") for name in property_list(properties.get("tags"), COMMAS_AND_SPACES))
    return [name for name in names if is_tag_name(name)]


def unique_tags(tags: list[Tag]) -> list[Tag]:
    """Each tag once; the first spelling wins, as Obsidian shows the case first written."""
    seen = {}
    for tag in tags:
        seen.setdefault(tag.key, tag)
    return list(seen.values())


def property_links(properties: dict, key_lines: dict[str, int]) -> list[Link]:
    """The [[links]] written in property values ("[[Note]]", lists of them, nested maps)."""
    links = []
    for key, value in properties.items():
        for text in _texts(value):
            for link in wikilinks_in(text):
                link.from_property, link.line = key, key_lines.get(key, 1)
                links.append(link)
    return links


def _texts(value) -> list[str]:
    """Every string inside a property value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    return []
