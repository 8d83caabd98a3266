"""Content decoding, bounded step by step, for answers from servers this tool does not own.

httpx undoes gzip and deflate itself, but one network read at a time and whole (zlib without max_length): 64 KiB of a
gzip bomb turns into about 64 MiB in memory before a caller counting the decoded bytes can stop it, so a size limit
alone does not bound what the client holds. Here the raw bytes go through zlib with max_length, so every piece
handed on is at most STEP bytes and a caller that counts them (as the client and the bench do) stops within one
step of its limit. The client asks only for what it can decode this way (ACCEPT); a server that sends another coding
anyway (br, zstd, ...) is refused with its name, not trusted."""

from __future__ import annotations

import zlib
from typing import AsyncIterable, AsyncIterator, Iterable, Iterator

import httpx

ACCEPT = "gzip, deflate"
STEP = 1 << 16


class _Inflater:
    """One content coding of the answer, gzip or deflate (deflate as RFC 9110 means it, zlib-wrapped, or raw
    deflate as some servers send it: tried when the zlib header does not parse, as httpx and browsers do)."""

    def __init__(self, coding: str):
        self.coding = coding
        self.d = zlib.decompressobj(zlib.MAX_WBITS | 16 if coding == "gzip" else zlib.MAX_WBITS)
        self.produced = False
        # deflate's first bytes, to be read again as raw deflate when the zlib header turns out not to be one (it is
        # checked in the first two bytes, which may come in reads of one byte each)
        self.fed = b"" if coding == "deflate" else None

    def pieces(self, data: bytes) -> Iterator[bytes]:
        whole, prior = data, self.fed
        if self.fed is not None:
            self.fed = self.fed + data if len(self.fed) + len(data) <= 64 else None
        while not self.d.eof:
            try:
                out = self.d.decompress(data, STEP)
            except zlib.error as exc:
                if self.coding == "deflate" and not self.produced and prior is not None:
                    self.d, self.coding, self.fed = zlib.decompressobj(-zlib.MAX_WBITS), "raw deflate", None
                    data, prior = prior + whole, None
                    continue
                raise httpx.DecodingError(f"the answer's {self.coding} body does not decode: {exc}") from None
            data = self.d.unconsumed_tail
            if out:
                self.produced, self.fed = True, None
                yield out
            if not data and len(out) < STEP:
                return


def _inflaters(content_encoding: str | None) -> list[_Inflater]:
    """The decoders to run, in the order the codings must be undone (the last one applied first)."""
    codings = [c.strip().lower() for c in (content_encoding or "").split(",")]
    codings = ["gzip" if c == "x-gzip" else c for c in codings if c and c != "identity"]
    for c in codings:
        if c not in ("gzip", "deflate"):
            raise httpx.DecodingError(f"the answer is encoded as {c!r}, which this client neither asks for nor "
                                      f"reads (it asks for {ACCEPT})")
    return [_Inflater(c) for c in reversed(codings)]


def _through(piece: bytes, inflaters: list[_Inflater]) -> Iterator[bytes]:
    if not inflaters:
        if piece:
            yield piece
        return
    for out in inflaters[0].pieces(piece):
        yield from _through(out, inflaters[1:])


def decoded(raw: Iterable[bytes], content_encoding: str | None) -> Iterator[bytes]:
    """The answer's body as sent before its content codings, from its raw bytes (httpx's iter_raw): an encoded body
    in pieces of at most STEP bytes, a plain one in the network's reads."""
    inflaters = _inflaters(content_encoding)
    for chunk in raw:
        yield from _through(chunk, inflaters)


async def adecoded(raw: AsyncIterable[bytes], content_encoding: str | None) -> AsyncIterator[bytes]:
    """decoded() for httpx's aiter_raw."""
    inflaters = _inflaters(content_encoding)
    async for chunk in raw:
        for out in _through(chunk, inflaters):
            yield out
