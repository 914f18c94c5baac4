#!/usr/bin/env python3
"""The embed demo as chapter 6 shows it: one question, ranked against the demo's
sentences by the offline hashing embedder. It needs no Ollama, so it prints the
same on every machine, and make check-6 compares its output with offline_demo.out.

It is the same as

    python3 embeddings.py --embedder hash --query "how do I know my starter is ready"

Leave out --embedder hash, and with Ollama running the same question is ranked
by nomic-embed-text: compare the two.
"""
import sys

from embeddings import main

QUESTION = "how do I know my starter is ready"

if __name__ == "__main__":
    sys.exit(main(["--embedder", "hash", "--query", QUESTION]))
