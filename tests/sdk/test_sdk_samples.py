"""The project's own sample pages, read back by a real PDF reader (pypdf) and the table image decoded:
what verify parses must be the pages samples.py says it is (a page tree pointing at the wrong objects
or a content stream on the wrong page would pass a byte-level look)."""

import struct
import zlib

import pypdf
import pytest

from ocrdeploy.sdk import samples


def read(pdf: bytes):
    import io

    return pypdf.PdfReader(io.BytesIO(pdf), strict=True)


def words(text):
    return " ".join(text.split())


@pytest.mark.parametrize("page, want", [
    ("text", [samples.TEXT[0], *samples.TEXT[2:]]),
    ("table", [c for row in samples.TABLE for c in row]),
    ("formula", [samples.FORMULA["numerator"], samples.FORMULA["denominator"], samples.FORMULA["lhs"]]),
])
def test_each_sample_page_is_one_page_with_its_text(page, want):
    reader = read(samples.PAGES[page]())
    assert len(reader.pages) == 1
    text = words(reader.pages[0].extract_text())
    for piece in want:
        assert words(piece) in text, (piece, text)
    fonts = reader.pages[0]["/Resources"]["/Font"]
    assert {fonts[f]["/BaseFont"] for f in fonts} == {"/Helvetica", "/Times-Italic"}


def test_the_deepseek_document_has_its_pages_in_order():
    reader = read(samples.deepseek_document())
    assert len(reader.pages) == len(samples.DEEPSEEK_PAGES) == 5
    tree = reader.trailer["/Root"]["/Pages"]
    assert tree["/Count"] == len(tree["/Kids"]) == 5          # what a reader that trusts /Count shows
    texts = [words(p.extract_text()) for p in reader.pages]
    firsts = [samples.TEXT[0], "Table 1: speculative decoding", "Equation 1", "Figure 1: throughput",
              "A two-column page"]
    for text, first, other in zip(texts, firsts, firsts[1:] + firsts[:1]):
        assert first in text and other not in text, text
    assert all(line[:38] in texts[4] for line in samples.LEFT + samples.RIGHT)


def decode_png(data: bytes):
    """(width, height, rows) of an 8-bit greyscale PNG with filter 0 rows, as samples writes it."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, head = 8, b"", None
    while pos < len(data):
        (n,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        assert struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0] == zlib.crc32(kind + body) & 0xFFFFFFFF
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, colour = head[:4]
    assert (depth, colour) == (8, 0)
    raw = zlib.decompress(idat)
    rows = [raw[y * (width + 1) + 1:(y + 1) * (width + 1)] for y in range(height)]
    assert all(raw[y * (width + 1)] == 0 for y in range(height))
    return width, height, rows


def test_the_table_image_is_the_guides_size_with_the_cells_drawn():
    """M37: the two-end check's image is a 1080x1080 table page: the ruled grid of TABLE and, in each cell,
    the glyphs of its text (read back from the pixels, glyph by glyph)."""
    w, h, rows = decode_png(samples.table_png())
    assert (w, h) == (1080, 1080)
    g = samples.TABLE_PNG_GRID
    for r in range(len(samples.TABLE) + 1):
        y = g["y0"] + r * g["row"]
        assert rows[y][g["x0"]:g["x0"] + 3 * g["col"]] == b"\x00" * (3 * g["col"])
    s = g["scale"]
    for r, row in enumerate(samples.TABLE):
        for k, cell in enumerate(row):
            x = g["x0"] + k * g["col"] + (g["col"] - samples.text_width(cell, s)) // 2
            y = g["y0"] + r * g["row"] + (g["row"] - 7 * s) // 2
            read = ""
            for i in range(len(cell)):
                bits = " ".join("".join("1" if rows[y + gy * s][x + (6 * i + gx) * s] == 0 else "0" for gx in range(5))
                                for gy in range(7))
                read += next(ch for ch, glyph in samples.FONT.items() if glyph == bits)
            assert read == cell.upper()


def test_the_smoke_image_is_a_small_valid_png():
    w, h, rows = decode_png(samples.png())
    assert (w, h) == (64, 64) and rows[24][30] == 30 and rows[0][0] == 235
