"""Seeded, clustered unit vectors shaped like a vault's embeddings, for tests and benchmarks.

Uniform random vectors are a poor stand-in for embeddings. In 768 dimensions any
two of them are nearly orthogonal, so the "nearest" ones are barely nearer than
the rest, and any approximate search looks either hopeless or perfect. Real
embeddings are clustered, and so are these:

- every vector leans toward one shared direction (a model's embeddings all do;
  it is why two unrelated texts score about 0.3, not 0);
- a note is about one topic and a little about a second, as notes are;
- the chunks of a note lie close to each other, around the note;
- dimensions differ in spread, as they do in trained models.

The weights below give cosine similarities like those of real text embeddings:
about 0.3 between unrelated chunks, 0.7 to 0.8 for a query's nearest chunk, and
a gradual fall from there (the benchmark prints the profile it measured).
Queries come in two kinds: a paraphrase of an existing note, and a new text on
the topics of the vault, whose nearest chunks are spread over many notes.
"""
import array
import math
import operator
import random
from itertools import repeat

INT8_SPREAD = 73.9  # the standard deviation of a uniformly random signed byte


class ClusteredVectors:
    def __init__(self, seed: int, dimension: int = 768, topics: int = 200, shared: float = 1.1,
                 topic: float = 1.0, second_topic: float = 0.7, note: float = 0.6, chunk: float = 0.7):
        self.random = random.Random(seed)
        self.dimension = dimension
        self.second_topic = second_topic
        spread = [math.exp(self.random.gauss(0, 0.5)) for _ in range(dimension)]
        step = 1 / (INT8_SPREAD * math.sqrt(dimension))  # a noise vector of weight w has length about w
        self.steps = {level: [weight * s * step for s in spread]
                      for level, weight in (("topic", topic), ("note", note), ("chunk", chunk))}
        shared_direction = self.noise("topic")
        scale = shared / math.sqrt(sum(map(operator.mul, shared_direction, shared_direction)))
        self.shared = [x * scale for x in shared_direction]
        self.topics = [self.noise("topic") for _ in range(topics)]

    def noise(self, level: str) -> list[float]:
        """Random numbers, fast: one random byte per dimension, scaled for the level."""
        return list(map(operator.mul, array.array("b", self.random.randbytes(self.dimension)), self.steps[level]))

    def note_centre(self) -> list[float]:
        first, second = self.random.sample(self.topics, 2)
        mix = self.random.random() * self.second_topic
        centre = map(operator.add, self.shared, first)
        centre = map(operator.add, centre, map(operator.mul, second, repeat(mix)))
        return list(map(operator.add, centre, self.noise("note")))

    def chunk(self, centre: list[float]) -> list[float]:
        """A unit vector near `centre`."""
        vector = list(map(operator.add, centre, self.noise("chunk")))
        scale = 1 / math.sqrt(sum(map(operator.mul, vector, vector)))
        return list(map(operator.mul, vector, repeat(scale)))

    def notes(self, count: int, chunks_per_note: int = 4) -> list[tuple[list[float], list[list[float]]]]:
        """`count` notes as (centre, chunk vectors); each has 1 to 2*chunks_per_note-1 chunks."""
        notes = []
        for _ in range(count):
            centre = self.note_centre()
            chunks = [self.chunk(centre) for _ in range(self.random.randint(1, 2 * chunks_per_note - 1))]
            notes.append((centre, chunks))
        return notes

    def queries(self, count: int, notes) -> list[list[float]]:
        """Half paraphrase an existing note, half are new text on the vault's topics."""
        queries = []
        for i in range(count):
            centre = self.random.choice(notes)[0] if i % 2 else self.note_centre()
            queries.append(self.chunk(centre))
        return queries
