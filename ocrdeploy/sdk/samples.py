"""Sample pages the project makes itself (nothing downloaded): a text page, a table page and a formula
page as small PDFs, and a PNG for smoke requests.  Pure Python: PDF operators and zlib."""

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


def png(width=64, height=64) -> bytes:
    """A small grey PNG with a dark bar: a valid image for a smoke request."""
    rows = b""
    for y in range(height):
        row = bytes([0])
        for x in range(width):
            v = 30 if 20 <= y <= 28 and 8 <= x <= 56 else 235
            row += bytes([v])
        rows += row

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
