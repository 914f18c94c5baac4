"""No input reaches Ollama longer than max_chars: over-long ones are cut, prefix kept."""
import json

from probe import StandInOllama, expect, ok, run_copy, shown

# Run inside the copy: embed documents and a query through the stand-in, and say
# what came back. An OllamaEmbedder without the option fails with a TypeError.
EMBED = """
import json, sys
from ollama_client import OllamaEmbedder
url, options, texts, query = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
try:
    ollama = OllamaEmbedder(url, attempts=1, **options)
except TypeError as error:
    print(json.dumps({"refused": str(error)}))
    sys.exit()
print(json.dumps({"documents": len(ollama.embed_documents(texts)), "query": len(ollama.embed_query(query))}))
"""


def embed(server, ollama, options: dict, texts: list[str], query: str) -> list[str]:
    """Every input the stand-in received, in order, after the copy embedded texts and query."""
    ollama.requests.clear()
    done = run_copy(server.folder, ["-c", EMBED, ollama.url, json.dumps(options), json.dumps(texts), query])
    expect(done.returncode == 0 and done.stdout.strip(), f"embedding through OllamaEmbedder{options or ''} failed: "
                                                         f"{(done.stderr or done.stdout).strip()[-600:]}")
    answer = json.loads(done.stdout)
    expect("refused" not in answer,
           f"OllamaEmbedder(url, max_chars=...) is refused: {answer.get('refused')}. Give OllamaEmbedder "
           f"(ollama_client.py) a max_chars option, 8000 unless told otherwise")
    expect(answer == {"documents": len(texts), "query": 4},
           f"one vector per text and one for the query should come back; the copy says {shown(answer)}")
    return [text for body in ollama.embedded() for text in body.get("input", [])]


def check(server):
    with StandInOllama() as ollama:
        sent = embed(server, ollama, {"max_chars": 100}, ["rye " * 1000, "kimchi"], "sour " * 1000)
        expect(len(sent) == 3, f"three inputs should reach Ollama, two documents and a query; {len(sent)} did")
        longest = max(len(text) for text in sent)
        expect(longest <= 100,
               f"with max_chars=100, an input of {longest} characters reached Ollama: cut every input before it "
               f"is sent (in OllamaEmbedder._embed, where each batch is sent), its task prefix included")
        expect(sent[0].startswith("search_document: rye rye") and sent[2].startswith("search_query: sour sour"),
               f"cut the end of a text, never its task prefix: the inputs began {shown([t[:30] for t in sent])}")
        expect(sent[1] == "search_document: kimchi", f"a short text goes as it was; it went as {sent[1]!r}")
        ok("with max_chars=100, long texts are cut to 100 characters, prefix kept, and short ones go as they were")

        sent = embed(server, ollama, {}, ["crumb " * 5000], "crust " * 5000)
        longest = max(len(text) for text in sent)
        expect(longest <= 8000, f"without max_chars, an input of {longest} characters reached Ollama: "
                                f"make 8000 the default")
        expect(min(len(text) for text in sent) > 4000, f"without max_chars, the default cut should keep 8000 "
                                                       f"characters; the inputs had {[len(t) for t in sent]}")
        ok("the default is 8000 characters")

        sent = embed(server, ollama, {"max_chars": 50, "batch_size": 2}, ["a", "b", "c"], "d")
        expect([len(body.get("input", [])) for body in ollama.embedded()] == [2, 1, 1],
               f"batches should still be sent as before (2, then 1, then the query); they were "
               f"{[len(body.get('input', [])) for body in ollama.embedded()]}")
        ok("batches are sent as before")
