"""Draw the server's icon, with the standard library only: icon-512.png for the bundle
(Claude Desktop shows it), icon-64.png for serverInfo (sent inside initialize).

    python3 steps/data/draw_icon.py

A violet rounded square and a white faceted gem, Obsidian's colours. A PNG is a
signature and three chunks: IHDR (size and colour type), IDAT (the rows, each after
a filter byte 0, deflated) and IEND; each chunk is its length, type, data and a
CRC-32 of type and data. Each pixel is the mean of 4 x 4 samples, so edges are smooth.
The same script gives the same bytes.
"""
import struct
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
VIOLET, DARK_VIOLET = (124, 58, 237), (76, 29, 149)
WHITE, LILAC = (255, 255, 255), (221, 214, 254)
SAMPLES = 4


def colour_at(x: float, y: float) -> tuple[int, int, int, int] | None:
    """The colour at (x, y) in a unit square, None outside the icon."""
    if not inside_rounded_square(x, y, margin=0.04, radius=0.2):
        return None
    dx, dy = x - 0.5, y - 0.52
    if abs(dx) / 0.26 + abs(dy) / 0.34 <= 1:  # the gem: a rhombus, lit from the left
        return (*(WHITE if dx < 0 else LILAC), 255)
    return (*(VIOLET if y < 0.75 else DARK_VIOLET), 255)


def inside_rounded_square(x: float, y: float, margin: float, radius: float) -> bool:
    low, high = margin + radius, 1 - margin - radius
    nearest_x, nearest_y = min(max(x, low), high), min(max(y, low), high)
    return (x - nearest_x) ** 2 + (y - nearest_y) ** 2 <= radius ** 2


def pixel(column: int, row: int, size: int) -> bytes:
    """The mean of SAMPLES x SAMPLES samples, premultiplied so that a half-covered
    pixel at an edge is half as opaque, not darker."""
    totals = [0, 0, 0, 0]
    for i in range(SAMPLES):
        for j in range(SAMPLES):
            colour = colour_at((column + (i + 0.5) / SAMPLES) / size, (row + (j + 0.5) / SAMPLES) / size)
            if colour:
                for channel in range(4):
                    totals[channel] += colour[channel]
    count = SAMPLES * SAMPLES
    alpha = totals[3] / count
    if not alpha:
        return bytes(4)
    return bytes([round(totals[c] / count * 255 / alpha) for c in range(3)] + [round(alpha)])


def png(size: int) -> bytes:
    rows = b"".join(b"\0" + b"".join(pixel(column, row, size) for column in range(size)) for row in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8 bits per channel, RGBA
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


if __name__ == "__main__":
    for size in (512, 64):
        path = HERE / f"icon-{size}.png"
        path.write_bytes(png(size))
        print(f"wrote {path.name} ({path.stat().st_size:,} bytes)")
