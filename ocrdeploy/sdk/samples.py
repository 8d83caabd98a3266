"""Sample pages the project makes itself (nothing downloaded): a text page, a table page and a formula
page as small PDFs, a PNG for smoke requests and the table as a 1080x1080 PNG (the guide's two-end
reference size).  Pure Python: PDF operators, a 5x7 bitmap font and zlib."""

from __future__ import annotations

import struct
import zlib

TEXT = ["Document parsing with MiniCPM-OCR", "",
        "The quick brown fox jumps over the lazy dog. Optical character recognition",
        "turns scanned pages into text that can be searched, copied and indexed.",
        "This page holds plain paragraphs only, set in a common sans-serif face."]
TABLE = [["Model", "Params", "Accept length"], ["MiniCPM-OCR 1.0", "1.3B", "6.2"], ["DSpark draft", "0.1B", "-"]]
# x = (a + b) / 2c, drawn as a displayed fraction; a parse must give it back as LaTeX with these tokens
FORMULA = {"lhs": "x =", "numerator": "a + b", "denominator": "2c", "latex": r"x = \frac{a + b}{2c}",
           "tokens": ("x", "=", "\\frac", "a", "+", "b", "2", "c")}


def pdf(content, *more) -> bytes:
    """A PDF with one page per content stream (Helvetica and Times-Italic)."""
    pages = [content, *more]
    n = len(pages)
    # objects: 1 catalog, 2 pages, 3-4 fonts, then per page: page, contents
    kids = " ".join(f"{5 + 2 * i} 0 R" for i in range(n))
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Italic >>"]
    for i, c in enumerate(pages):
        stream = zlib.compress(c.encode("latin-1"))
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {6 + 2 * i} 0 R "
                    f"/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> >>".encode())
        objs.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


def _text(x, y, s, size=12, font="F1"):
    s = s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return f"BT /{font} {size} Tf {x} {y} Td ({s}) Tj ET\n"


def text_content() -> str:
    c = _text(72, 720, TEXT[0], 20)
    for i, line in enumerate(TEXT[2:]):
        c += _text(72, 680 - i * 18, line)
    return c


def text_page() -> bytes:
    return pdf(text_content())


def table_page() -> bytes:
    return pdf(table_content())


def table_content() -> str:
    c = _text(72, 720, "Table 1: speculative decoding", 16)
    x0, y0, cw, rh = 72, 680, 160, 24
    rows, cols = len(TABLE), len(TABLE[0])
    for r in range(rows + 1):
        c += f"{x0} {y0 - r * rh} m {x0 + cols * cw} {y0 - r * rh} l S\n"
    for k in range(cols + 1):
        c += f"{x0 + k * cw} {y0} m {x0 + k * cw} {y0 - rows * rh} l S\n"
    for r, row in enumerate(TABLE):
        for k, cell in enumerate(row):
            c += _text(x0 + k * cw + 6, y0 - r * rh - 17, cell)
    return c


def formula_page() -> bytes:
    """A displayed fraction (numerator over a rule over denominator): OCR writes LaTeX for it."""
    return pdf(formula_content())


def formula_content() -> str:
    c = _text(72, 720, "Equation 1", 16)
    c += _text(200, 640, FORMULA["numerator"], 18, "F2") + "190 632 m 260 632 l S\n"
    c += _text(212, 612, FORMULA["denominator"], 18, "F2") + _text(150, 622, FORMULA["lhs"], 18, "F2")
    c += _text(72, 560, "where the mean of n samples is the sum of x_i divided by n.")
    return c


def figure_content() -> str:
    """A captioned figure (a filled chart area with bars): OCR puts an image placeholder there."""
    c = _text(72, 720, "Figure 1: throughput", 16)
    c += "0.9 g 72 420 468 260 re f 0.2 g 110 440 60 120 re f 210 440 60 200 re f 310 440 60 90 re f 0 g\n"
    c += _text(72, 395, "Figure 1. Requests per second for three settings.")
    return c


LEFT = [f"Left column line {i}: the first column is read first." for i in range(1, 9)]
RIGHT = [f"Right column line {i}: the second column comes after." for i in range(1, 9)]


def two_column_content() -> str:
    """Two columns side by side: reading them in order keeps every LEFT line before every RIGHT line."""
    c = _text(72, 740, "A two-column page", 18)
    for i, (left, right) in enumerate(zip(LEFT, RIGHT)):
        c += _text(72, 700 - i * 16, left[:38], 9) + _text(320, 700 - i * 16, right[:38], 9)
    return c


DEEPSEEK_PAGES = ("text", "table", "formula", "figure", "two-column")


def deepseek_document() -> bytes:
    """The DeepSeek-OCR sample document: one page per check, in DEEPSEEK_PAGES order."""
    return pdf(text_content(), table_content(), formula_content(), figure_content(), two_column_content())


PAGES = {"text": text_page, "table": table_page, "formula": formula_page}


def _png(rows: list, width: int, height: int) -> bytes:
    """An 8-bit greyscale PNG of `rows` (bytes-like, `width` long each)."""
    raw = b"".join(b"\x00" + bytes(r) for r in rows)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def png(width=64, height=64) -> bytes:
    """A small grey PNG with a dark bar: a valid image for a smoke request."""
    return _png([bytes(30 if 20 <= y <= 28 and 8 <= x <= 56 else 235 for x in range(width)) for y in range(height)],
                width, height)


# A 5x7 bitmap font (the classic HD44780 glyph shapes), rows top to bottom, for the characters of TABLE
# and its title, upper case: enough for an OCR model to read the cells, with no font file or library.
FONT = {
    "A": "01110 10001 10001 11111 10001 10001 10001", "B": "11110 10001 10001 11110 10001 10001 11110",
    "C": "01110 10001 10000 10000 10000 10001 01110", "D": "11100 10010 10001 10001 10001 10010 11100",
    "E": "11111 10000 10000 11110 10000 10000 11111", "F": "11111 10000 10000 11110 10000 10000 10000",
    "G": "01110 10001 10000 10111 10001 10001 01111", "H": "10001 10001 10001 11111 10001 10001 10001",
    "I": "01110 00100 00100 00100 00100 00100 01110", "J": "00111 00010 00010 00010 00010 10010 01100",
    "K": "10001 10010 10100 11000 10100 10010 10001", "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001", "N": "10001 10001 11001 10101 10011 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110", "P": "11110 10001 10001 11110 10000 10000 10000",
    "Q": "01110 10001 10001 10001 10101 10010 01101", "R": "11110 10001 10001 11110 10100 10010 10001",
    "S": "01111 10000 10000 01110 00001 00001 11110", "T": "11111 00100 00100 00100 00100 00100 00100",
    "U": "10001 10001 10001 10001 10001 10001 01110", "V": "10001 10001 10001 10001 10001 01010 00100",
    "W": "10001 10001 10001 10101 10101 10101 01010", "X": "10001 10001 01010 00100 01010 10001 10001",
    "Y": "10001 10001 10001 01010 00100 00100 00100", "Z": "11111 00001 00010 00100 01000 10000 11111",
    "0": "01110 10001 10011 10101 11001 10001 01110", "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111", "3": "11111 00010 00100 00010 00001 10001 01110",
    "4": "00010 00110 01010 10010 11111 00010 00010", "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110", "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110", "9": "01110 10001 10001 01111 00001 00010 01100",
    ".": "00000 00000 00000 00000 00000 01100 01100", "-": "00000 00000 00000 11111 00000 00000 00000",
    ":": "00000 01100 01100 00000 01100 01100 00000", " ": "00000 00000 00000 00000 00000 00000 00000",
}
TABLE_TITLE = "Table 1: speculative decoding"
TABLE_PNG_SIZE = 1080          # the guide's reference image for the two-end check is 1080x1080
TABLE_PNG_GRID = {"x0": 60, "y0": 260, "col": 320, "row": 120, "scale": 3, "line": 3}


def _draw_text(rows, x, y, text, scale):
    for ch in text.upper():
        glyph = FONT[ch].split()
        for gy, bits in enumerate(glyph):
            for gx, bit in enumerate(bits):
                if bit == "1":
                    for dy in range(scale):
                        rows[y + gy * scale + dy][x + gx * scale:x + (gx + 1) * scale] = b"\x00" * scale
        x += 6 * scale


def text_width(text: str, scale: int) -> int:
    return len(text) * 6 * scale - scale


def table_png() -> bytes:
    """The table page as the guide's 1080x1080 image: the title, a ruled 3x3 grid and TABLE's cells."""
    n, g = TABLE_PNG_SIZE, TABLE_PNG_GRID
    rows = [bytearray(b"\xff" * n) for _ in range(n)]
    _draw_text(rows, g["x0"], g["y0"] - 100, TABLE_TITLE, 4)
    cols, nrows = len(TABLE[0]), len(TABLE)
    right, bottom = g["x0"] + cols * g["col"], g["y0"] + nrows * g["row"]
    for r in range(nrows + 1):
        for dy in range(g["line"]):
            rows[g["y0"] + r * g["row"] + dy][g["x0"]:right + g["line"]] = b"\x00" * (right + g["line"] - g["x0"])
    for k in range(cols + 1):
        x = g["x0"] + k * g["col"]
        for y in range(g["y0"], bottom + g["line"]):
            rows[y][x:x + g["line"]] = b"\x00" * g["line"]
    for r, row in enumerate(TABLE):
        for k, cell in enumerate(row):
            x = g["x0"] + k * g["col"] + (g["col"] - text_width(cell, g["scale"])) // 2
            y = g["y0"] + r * g["row"] + (g["row"] - 7 * g["scale"]) // 2
            _draw_text(rows, x, y, cell, g["scale"])
    return _png(rows, n, n)
