"""A generated vault with the structure of a real one, for benchmarks: make_vault(folder, notes, seed).

Each note is the size of a real one (a mean of about 6 KB, as in Obsidian's own help
vault and the corpora of real notes measured beside it) and is written in the Markdown
real notes use: frontmatter (tags, aliases, a status, dates, sometimes a description),
a first paragraph, three to eight sections under headings (some nested), wikilinks to
other notes (some to a heading, some with display text, a few to notes that do not
exist), embeds, Markdown links to the web, inline tags, bold and inline code, bulleted,
numbered and task lists, tables, callouts and fenced code. The words are whole English
words of the static embedder's vocabulary, drawn by Zipf's law, so tokenizing and
embedding cost what they cost on real text. The same seed makes the same vault, byte
for byte.
"""
import random
from itertools import accumulate
from pathlib import Path

VOCABULARY = Path(__file__).resolve().parent.parent / "steps" / "data" / "minilm-vocab.txt"
FOLDERS = ("Projects", "Areas/Health", "Areas/Home", "Reading", "Journal", "Reference/Tools", "Reference/Ideas",
           "Inbox", "Archive/2024", "Archive/2025")

UNWANTED = frozenset({"fucking", "fuck", "shit", "damn", "sex", "sexual", "porn", "bitch", "ass"})


def english_words() -> list[str]:
    """The vocabulary's whole words of three letters or more, in its order (roughly by frequency)."""
    words = []
    for token in VOCABULARY.read_text(encoding="utf-8").splitlines():
        if len(token) >= 3 and token.isascii() and token.isalpha() and token.islower() and token not in UNWANTED:
            words.append(token)
    return words


class Writer:
    """Draws words, titles, links and tags for one vault from one random generator."""

    def __init__(self, notes: int, seed: int):
        self.rng = random.Random(seed)
        self.words = english_words()[:8000]
        self.zipf = list(accumulate(1 / rank for rank in range(1, len(self.words) + 1)))
        self.titles = [self.title(number) for number in range(notes)]
        self.tags = [f"{self.rng.choice(self.words[200:2000])}" for _ in range(60)]

    def title(self, number: int) -> str:
        words = self.rng.choices(self.words[100:4000], k=self.rng.randint(2, 4))
        return f"{' '.join(words).capitalize()} {number}"

    def sentence(self, links: bool = True) -> str:
        words = self.rng.choices(self.words, cum_weights=self.zipf, k=self.rng.randint(8, 22))
        if links and self.rng.random() < 0.25:
            words.insert(self.rng.randrange(len(words)), self.link())
        if self.rng.random() < 0.08:
            words.append(f"#{self.rng.choice(self.tags)}")
        return " ".join(words).capitalize() + "."

    def link(self) -> str:
        roll = self.rng.random()
        if roll < 0.03:
            return f"[[Missing note {self.rng.randrange(1000)}]]"
        target = self.rng.choice(self.titles)
        if roll < 0.15:
            return f"[[{target}#{self.rng.choice(self.words[:3000]).capitalize()}]]"
        if roll < 0.3:
            return f"[[{target}|{self.rng.choice(self.words[:3000])}]]"
        return f"[[{target}]]"

    def paragraph(self) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(2, 6)))

    def frontmatter(self) -> str:
        tags = ", ".join(sorted(set(self.rng.sample(self.tags, self.rng.randint(1, 3)))))
        lines = ["---", f"tags: [{tags}]"]
        if self.rng.random() < 0.3:
            lines.append(f"aliases: [{self.rng.choice(self.words[100:4000]).capitalize()}]")
        if self.rng.random() < 0.4:
            lines.append(f"description: {self.sentence(links=False)}")
        lines.append(f"status: {self.rng.choice(['draft', 'active', 'done', 'someday'])}")
        lines.append(f"created: 2025-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}")
        return "\n".join(lines + ["---", ""])

    def words_of(self, low: int, high: int) -> str:
        return " ".join(self.rng.choices(self.words[:3000], k=self.rng.randint(low, high)))

    def rich_sentence(self) -> str:
        """A sentence with, now and then, what real prose carries: bold, inline code, a web link."""
        sentence = self.sentence()
        roll = self.rng.random()
        if roll < 0.08:
            return f"{sentence[:-1]} **{self.words_of(1, 3)}**."
        if roll < 0.14:
            return f"{sentence[:-1]} with `{self.rng.choice(self.words[:3000])}_{self.rng.randrange(100)}`."
        if roll < 0.18:
            return f"{sentence[:-1]}, see [{self.words_of(1, 3)}](https://example.org/{self.rng.choice(self.words)})."
        return sentence

    def prose(self) -> str:
        return " ".join(self.rich_sentence() for _ in range(self.rng.randint(3, 7)))

    def block(self) -> list[str]:
        """One of the blocks that real notes put between paragraphs."""
        roll = self.rng.random()
        if roll < 0.3:
            return [f"- {self.sentence()}" for _ in range(self.rng.randint(3, 6))]
        if roll < 0.42:
            return [f"{number}. {self.sentence()}" for number in range(1, self.rng.randint(3, 6))]
        if roll < 0.52:
            return [f"- [{self.rng.choice(' x')}] {self.sentence(links=False)}" for _ in range(self.rng.randint(2, 5))]
        if roll < 0.62:
            rows = [f"| {self.words_of(1, 2)} | {self.words_of(1, 4)} | {self.rng.randint(1, 900)} |"
                    for _ in range(self.rng.randint(2, 5))]
            return ["| Name | Notes | Count |", "| --- | --- | ---: |"] + rows
        if roll < 0.72:
            kind = self.rng.choice(["note", "tip", "warning", "info"])
            return [f"> [!{kind}] {self.words_of(2, 4).capitalize()}", f"> {self.sentence()}"]
        if roll < 0.82:
            name = self.rng.choice(self.words[:3000])
            return ["```python", f"def {name}(items):", f"    # {self.words_of(3, 8)}",
                    f"    return [item for item in items if item.{name}]", "```"]
        if roll < 0.9:
            target = self.rng.choice(self.titles)
            return [f"![[{target}#{self.words_of(1, 2).capitalize()}]]" if roll < 0.86 else
                    f"![[{self.rng.choice(self.words[:3000])}.png]]"]
        return [f"> {self.sentence()}"]

    def note(self, number: int) -> str:
        parts = [self.frontmatter(), f"# {self.titles[number]}", "", self.prose(), ""]
        for _ in range(self.rng.randint(3, 8)):
            level = "##" if self.rng.random() < 0.7 else "###"
            parts += [f"{level} {self.words_of(2, 4).capitalize()}", ""]
            for _ in range(self.rng.randint(1, 2)):
                parts += [self.prose(), ""]
                if self.rng.random() < 0.45:
                    parts += self.block() + [""]
        return "\n".join(parts)


def make_vault(folder: Path, notes: int, seed: int = 17) -> list[str]:
    """Write `notes` notes into `folder`; their paths, relative to it."""
    writer = Writer(notes, seed)
    paths = []
    for number in range(notes):
        path = f"{FOLDERS[number % len(FOLDERS)]}/{writer.titles[number]}.md"
        file = folder / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(writer.note(number), encoding="utf-8")
        paths.append(path)
    return paths
