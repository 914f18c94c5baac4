"""vault-mcp, the command that `pip install .` makes: the newest step, installed.

The step's modules import one another by their own names (`import tools`), as they
do in the repository. Installed as they are, names as plain as `tools` and `server`
would sit at the top of site-packages, where another package's may already be; so
they are installed inside this package, and the command puts their folder first on
sys.path before it starts the server, as the .pyz does (steps/package.py).
"""
import os
import sys


def main():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "server"))
    import server

    server.main()
