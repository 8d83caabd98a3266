"""The pages `inv bench` sends, each with what it should read as.

The project's own sample pages (samples.py, whose truth is known exactly) are PDFs; a chat request takes
an image, so they are rendered once with PDFium (the renderer Chrome uses, through pypdfium2) at 144 dpi.
A user's image pages are sent as they are on disk, byte for byte: no re-encoding, no resizing (what a
load generator that decodes and re-saves images as JPEG cannot promise).  A user's PDF is rendered the
same way as the samples.  Ground truth for a user page is a Markdown file beside it: page.png + page.md,
and for page N of doc.pdf, doc-N.md (or doc.md for a one-page PDF).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from . import samples

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
               ".gif": "image/gif", ".bmp": "image/bmp"}
_MAGIC = {"image/png": (b"\x89PNG\r\n\x1a\n",), "image/jpeg": (b"\xff\xd8\xff",), "image/gif": (b"GIF87a", b"GIF89a"),
          "image/bmp": (b"BM",), "image/webp": (b"RIFF",)}
DPI = 144


@dataclass
class Page:
    name: str                   # unique within a run: the sample's kind, or the file name (with -pN for a PDF)
    image: bytes                # exactly what goes into the data URL
    mime: str
    kind: str                   # text, table, formula (the project's pages, scored as `inv verify` does) or user
    truth: str | None = None    # ground-truth Markdown of a user page (None: timed, not scored)
    source: str = ""            # where it came from, for the report
    extra: dict = field(default_factory=dict)


def render_pdf(data: bytes, source: str) -> list[bytes]:
    """Each page of a PDF as PNG bytes at DPI."""
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise UsageError(f"{source}: not a PDF PDFium can open ({exc})")
    out = []
    try:
        for i in range(len(doc)):
            bitmap = doc[i].render(scale=DPI / 72)
            buf = io.BytesIO()
            bitmap.to_pil().save(buf, format="PNG")
            out.append(buf.getvalue())
    finally:
        doc.close()
    return out


def sample_pages() -> list[Page]:
    """The text, table and formula pages `inv verify` checks, rendered from the very PDFs it parses."""
    return [Page(kind, render_pdf(make(), f"sample {kind} page")[0], "image/png", kind,
                 source=f"ocrdeploy sample {kind} page (samples.py, rendered at {DPI} dpi)")
            for kind, make in samples.PAGES.items()]


def _truth(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _image_page(path: Path) -> Page:
    mime = IMAGE_TYPES[path.suffix.lower()]
    data = path.read_bytes()
    if not data.startswith(_MAGIC[mime]):
        raise UsageError(f"--pages {path}: not a {mime} file (its first bytes say otherwise)")
    return Page(path.name, data, mime, "user", _truth(path.with_suffix(".md")), str(path))


def _pdf_pages(path: Path) -> list[Page]:
    images = render_pdf(path.read_bytes(), f"--pages {path}")
    out = []
    for i, png in enumerate(images, 1):
        truth = _truth(path.with_name(f"{path.stem}-{i}.md"))
        if truth is None and len(images) == 1:
            truth = _truth(path.with_suffix(".md"))
        out.append(Page(f"{path.name}-p{i}", png, "image/png", "user", truth, f"{path} page {i} ({DPI} dpi)"))
    return out


def user_pages(where: str) -> list[Page]:
    """The pages of --pages: an image, a PDF, or a directory of them (sorted by name)."""
    path = Path(where).expanduser()
    if not path.exists():
        raise UsageError(f"--pages {where}: no such file or directory")
    try:
        return _read_pages(where, path)
    except OSError as exc:           # unreadable file or directory: one line, not a traceback
        raise UsageError(f"--pages {where}: {exc.filename or where}: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--pages {where}: a ground-truth .md there is not UTF-8 ({exc.reason})")


def _read_pages(where: str, path: Path) -> list[Page]:
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    pages = []
    for f in files:
        suffix = f.suffix.lower()
        if suffix in IMAGE_TYPES:
            pages.append(_image_page(f))
        elif suffix == ".pdf":
            pages += _pdf_pages(f)
        elif path.is_file():
            raise UsageError(f"--pages {where}: give an image ({', '.join(IMAGE_TYPES)}), a PDF or a directory")
    if not pages:
        raise UsageError(f"--pages {where}: no image or PDF pages there")
    return pages
