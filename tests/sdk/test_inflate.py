"""sdk/inflate: an answer's content codings undone a bounded step at a time, for the client and the bench, against
real HTTP servers on 127.0.0.1 that compress as proxies and hostile servers do (gzip, zlib and raw deflate, codings
stacked, a bomb inside a bomb, a coding nobody asked for, a body cut or corrupt)."""

import gzip
import json
import subprocess
import sys
import zlib
from pathlib import Path

import httpx
import pytest

from loopback import LoopbackServer
from ocrdeploy.sdk import bench, inflate, pages as pages_mod
from ocrdeploy.sdk.client import OcrClient

MODELS = json.dumps({"object": "list", "data": [{"id": "minicpm-ocr"}]}).encode()


def _raw_deflate(data: bytes) -> bytes:
    co = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return co.compress(data) + co.flush()


def _gzip_bomb(mib: int) -> bytes:
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\n" * (1 << 20)
    return b"".join([co.compress(block) for _ in range(mib)] + [co.flush()])


def _split(data: bytes, size: int = 4096) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("coding,body", [
    (None, MODELS),
    ("identity", MODELS),
    ("gzip", gzip.compress(MODELS)),
    ("x-gzip", gzip.compress(MODELS)),
    ("GZIP", gzip.compress(MODELS)),
    ("deflate", zlib.compress(MODELS)),                       # RFC 9110's deflate: zlib-wrapped
    ("deflate", _raw_deflate(MODELS)),                        # what some servers send as deflate: raw
    ("deflate, gzip", gzip.compress(zlib.compress(MODELS))),  # codings listed in the order they were applied
    ("gzip, identity", gzip.compress(MODELS)),
])
def test_each_coding_is_undone_whatever_the_reads(coding, body):
    for size in (1, 7, 4096, len(body)):
        assert b"".join(inflate.decoded(_split(body, size), coding)) == MODELS


def test_a_bomb_comes_out_in_pieces_of_one_step():
    pieces = inflate.decoded(_split(_gzip_bomb(4), 1 << 16), "gzip")
    sizes = [len(p) for p in pieces]
    assert sum(sizes) == 4 << 20 and max(sizes) <= inflate.STEP


def test_a_bomb_inside_a_bomb_comes_out_in_pieces_of_one_step():
    """gzip of a gzip bomb: the outer layer inflates to the inner bomb, which must not be inflated whole either."""
    inner = _gzip_bomb(16)
    outer = gzip.compress(inner)
    seen = 0
    for piece in inflate.decoded([outer], "gzip, gzip"):
        assert len(piece) <= inflate.STEP
        seen += len(piece)
        if seen > 1 << 20:
            break
    assert seen > 1 << 20


@pytest.mark.parametrize("coding", ["br", "zstd", "compress", "gzip, br"])
def test_a_coding_the_client_did_not_ask_for_is_refused_by_name(coding):
    with pytest.raises(httpx.DecodingError, match=rf"encoded as '{coding.split(', ')[-1]}', which this client"):
        list(inflate.decoded([b"x"], coding))


def test_a_corrupt_body_is_a_decoding_error_naming_the_coding():
    with pytest.raises(httpx.DecodingError, match="gzip body does not decode"):
        list(inflate.decoded([b"\x1f\x8b\x08\x00garbage" * 4], "gzip"))
    with pytest.raises(httpx.DecodingError, match="raw deflate body does not decode"):
        list(inflate.decoded([b"\xff\xff\xff\xff" * 4], "deflate"))


class Coding(LoopbackServer):
    """Answers every GET with `body` under Content-Encoding `coding` and keeps the Accept-Encoding it was sent."""

    def __init__(self, coding, body):
        super().__init__()
        self.coding, self.body, self.accepted = coding, body, []

    def handle(self, h, head: bool):
        self.accepted.append(h.headers.get("Accept-Encoding"))
        self.send(h, 200, self.body, "application/json", head, {"Content-Encoding": self.coding})

    def handle_post(self, h):
        h.rfile.read(int(h.headers.get("Content-Length", 0)))
        self.accepted.append(h.headers.get("Accept-Encoding"))
        self.send(h, 200, self.body, "text/event-stream", False, {"Content-Encoding": self.coding})


def test_the_client_asks_for_what_it_can_bound_and_reads_raw_deflate():
    with Coding("deflate", _raw_deflate(MODELS)) as srv, OcrClient(srv.url) as client:
        assert client.models() == ["minicpm-ocr"]
    assert srv.accepted == ["gzip, deflate"]


def test_the_client_asks_for_gzip_and_deflate_even_where_httpx_would_ask_for_brotli(tmp_path):
    """With brotli installed (a user's environment often has it) httpx asks for br by default, which it inflates
    whole; the client asks for what inflate bounds. A stand-in brotli module makes httpx think so."""
    (tmp_path / "brotli.py").write_text("class Decompressor:\n    pass\n")
    p = subprocess.run([sys.executable, "-c", (
        "import httpx, json\n"
        "from ocrdeploy.sdk.client import OcrClient\n"
        "print(json.dumps([httpx.Client().headers['accept-encoding'],\n"
        "                  OcrClient('http://127.0.0.1:9').http.headers['accept-encoding']]))\n")],
        capture_output=True, text=True, timeout=60, cwd=Path(__file__).parents[2],
        env={"PYTHONPATH": f"{tmp_path}:{Path(__file__).parents[2]}", "PATH": "/usr/bin:/bin"})
    default, ours = json.loads(p.stdout)
    assert "br" in default and ours == "gzip, deflate", (default, ours, p.stderr[-500:])


def test_the_client_stops_a_bomb_inside_a_bomb_at_its_limit():
    with Coding("gzip, gzip", gzip.compress(_gzip_bomb(64))) as srv:
        with OcrClient(srv.url, max_answer=1 << 20) as client:
            with pytest.raises(httpx.DecodingError, match="over 1048576 bytes"):
                client.metrics()


def test_the_client_refuses_brotli_it_did_not_ask_for():
    with Coding("br", b"\x0b\x02\x80hello\x03") as srv, OcrClient(srv.url) as client:
        with pytest.raises(httpx.DecodingError, match="encoded as 'br'"):
            client.models()


def test_the_bench_stops_a_compressed_stream_at_its_bound(monkeypatch):
    """A streamed answer that inflates past the bench's bound is one request's error, read no further."""
    monkeypatch.setattr(bench, "ANSWER_MAX", 1 << 20)
    with Coding("gzip", _gzip_bomb(64)) as srv:
        doc = bench.run(srv.url, pages_mod.sample_pages()[:1], levels=(1,), requests=1, warmup=0)
    lv = doc["levels"][0]
    assert lv["errors"] == 1 and lv["pages"] == 0, lv
    assert srv.accepted[0] == "gzip, deflate"


def test_the_bench_reads_compressed_metrics_and_gives_up_on_a_bomb(monkeypatch):
    text = b"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3.0\n"
    with Coding("gzip", gzip.compress(text)) as srv:
        read = bench.metrics_reader(srv.url)
        assert read() == text.decode()
        read.close()
    monkeypatch.setattr(bench, "METRICS_MAX", 1 << 20)
    with Coding("gzip", _gzip_bomb(64)) as srv:
        read = bench.metrics_reader(srv.url)
        assert read() is None
        read.close()
