"""The server's icon, for the serverInfo that initialize answers (2025-11-25 added
`icons`): the PNG in ../data, sent inline as a data: URI, since a server on the
user's machine has no web address a client could fetch it from."""
import base64
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
ICON, SIZE = "icon-64.png", "64x64"  # steps/data/draw_icon.py draws it


def server_icons(data_dir: Path = DATA_DIR) -> list[dict]:
    """One icon, or none when the data folder is missing: a server without its icon
    still serves. get_data, not open(): in the .pyz the file is inside the zip."""
    try:
        png = __loader__.get_data(str(data_dir / ICON))
    except OSError:
        return []
    return [{"src": "data:image/png;base64," + base64.b64encode(png).decode("ascii"),
             "mimeType": "image/png", "sizes": [SIZE]}]
