"""Reading QR codes back with a real decoder (zxing-cpp): from an image file (a Chromium screenshot)
or from the text `segno`'s compact terminal output printed (`companion url`)."""

from __future__ import annotations

from pathlib import Path

import pytest

zxingcpp = pytest.importorskip("zxingcpp", reason="zxing-cpp is not installed (the test extra)")

# segno's compact terminal QR code: each character is two pixels, top and bottom (1: light)
HALF_BLOCKS = {"█": (1, 1), " ": (0, 0), "▀": (1, 0), "▄": (0, 1)}


def decode_image(path: Path) -> list[str]:
    """The texts of every QR code in the picture, in reading order (top to bottom)."""
    from PIL import Image

    found = zxingcpp.read_barcodes(Image.open(path).convert("L"), formats=zxingcpp.BarcodeFormat.QRCode)
    return [
        code.text
        for code in sorted(found, key=lambda code: (code.position.top_left.y, code.position.top_left.x))
    ]


def decode_terminal(printed: str) -> list[str]:
    """The texts of the QR codes in a command's output: each block of half-block lines, redrawn as
    pixels, 4 per module, with a light margin, and decoded."""
    blocks: list[list[str]] = [[]]
    for line in printed.splitlines():
        if line and set(line) <= set(HALF_BLOCKS):
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    return [text for block in blocks if block for text in _decode_block(block)]


def _decode_block(lines: list[str], scale: int = 4, margin: int = 16) -> list[str]:
    width = max(len(line) for line in lines)
    rows: list[list[int]] = []
    for line in lines:
        top, bottom = zip(*(HALF_BLOCKS[char] for char in line.ljust(width, "█")), strict=True)
        rows += [list(top), list(bottom)]
    pixels = bytearray()
    blank = bytes([255]) * (width * scale + 2 * margin)
    pixels += blank * margin
    for row in rows:
        line = b"".join(bytes([255 if light else 0]) * scale for light in row)
        pixels += (bytes([255]) * margin + line + bytes([255]) * margin) * scale
    pixels += blank * margin
    height = len(rows) * scale + 2 * margin
    image = memoryview(bytes(pixels)).cast("B", (height, width * scale + 2 * margin))
    return [code.text for code in zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)]
