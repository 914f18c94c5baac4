"""OLLAMA_MODEL names the Ollama model to use when --model does not."""
from probe import StandInOllama, expect, ok, run_copy

PULLED = ["nomic-embed-text:latest", "mxbai-embed-large:latest", "all-minilm:latest"]
DEMO = ["embeddings.py", "--query", "sour", "rye", "kimchi"]
NAME = "from ollama_client import OllamaEmbedder; print(OllamaEmbedder().name)"


def run_demo(server, ollama, *args, env=None):
    """The copy's demo against the stand-in; the models its /api/embed requests named,
    and the startup line."""
    ollama.requests.clear()
    done = run_copy(server.folder, DEMO + list(args), {"OLLAMA_HOST": ollama.url} | (env or {}))
    expect(done.returncode == 0,
           f"python3 embeddings.py {' '.join(DEMO[1:] + list(args))} failed (with {env or 'no OLLAMA_MODEL'}): "
           f"{(done.stderr or done.stdout).strip()[-600:]}")
    models = {body.get("model") for body in ollama.embedded()}
    return models, (done.stdout.splitlines() or [""])[0]


def check(server):
    with StandInOllama(PULLED) as ollama:
        models, _line = run_demo(server, ollama, "--embedder", "ollama")
        expect(models == {"nomic-embed-text"},
               f"without OLLAMA_MODEL and without --model, the demo should still ask for nomic-embed-text; "
               f"it asked for {sorted(map(str, models))}")
        ok("without OLLAMA_MODEL, the model is nomic-embed-text")

        models, line = run_demo(server, ollama, "--embedder", "ollama", env={"OLLAMA_MODEL": "mxbai-embed-large"})
        expect(models == {"mxbai-embed-large"},
               f"with OLLAMA_MODEL=mxbai-embed-large, /api/embed was asked for {sorted(map(str, models))}: read "
               f"the variable where the default model is chosen (OllamaEmbedder in ollama_client.py), and let "
               f"make_embedder and --model (embeddings.py) pass no model unless one was named")
        expect("mxbai-embed-large" in line, f"the startup line should name the model in use; it says {line!r}")
        ok("OLLAMA_MODEL=mxbai-embed-large is the model asked for, and the startup line names it")

        done = run_copy(server.folder, ["-c", NAME], {"OLLAMA_HOST": ollama.url, "OLLAMA_MODEL": "mxbai-embed-large"})
        name = done.stdout.strip()
        expect(name == "ollama/mxbai-embed-large",
               f"with OLLAMA_MODEL=mxbai-embed-large, OllamaEmbedder().name should be 'ollama/mxbai-embed-large' "
               f"(step 7's index records it, to tell vectors of different models apart); it is {name!r} "
               f"{done.stderr.strip()[-300:]}")
        ok("the embedder's name, which an index records, names that model too")

        models, line = run_demo(server, ollama, "--embedder", "ollama", "--model", "all-minilm",
                                env={"OLLAMA_MODEL": "mxbai-embed-large"})
        expect(models == {"all-minilm"},
               f"--model all-minilm should win over OLLAMA_MODEL; /api/embed was asked for {sorted(map(str, models))}")
        ok("--model still wins over OLLAMA_MODEL")

        models, line = run_demo(server, ollama, "--embedder", "auto", env={"OLLAMA_MODEL": "bge-m3"})
        expect("offline static table" in line and "ollama pull bge-m3" in line,
               f"with OLLAMA_MODEL=bge-m3, which the stand-in has not pulled, auto should fall back to the static table "
               f"and say to run `ollama pull bge-m3`: the quick look (OllamaEmbedder.check) must look for the "
               f"same model. The startup line is {line!r}")
        ok("auto looks for the model OLLAMA_MODEL names, and says how to pull it when it is missing")
