"""sdk/client.OcrClient reads every answer within its size limit as decoded: a real local HTTP server that
compresses its answers (as a proxy in front of a server may) is read right, and a small gzip body that
inflates to 64 MiB stops at the limit with little memory used."""

import gzip
import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from loopback import LoopbackServer
from peakmem import PEAK_KB
from ocrdeploy.sdk.client import OcrClient

MODELS = json.dumps({"object": "list", "data": [{"id": "minicpm-ocr"}]}).encode()


def _bomb(inflated_mib: int) -> bytes:
    """A gzip body of about inflated_mib KiB on the wire that inflates to inflated_mib MiB (built block by block, so
    the test process never holds the inflated body)."""
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * (1 << 20)
    parts = [co.compress(b"{")] + [co.compress(block) for _ in range(inflated_mib)] + [co.compress(b"}"), co.flush()]
    return b"".join(parts)


BOMB = _bomb(512)       # ~0.5 MiB on the wire, 512 MiB inflated


class Gzipping(LoopbackServer):
    def handle(self, h, head: bool):
        body = gzip.compress(MODELS) if h.path == "/v1/models" else BOMB
        self.send(h, 200, body, "application/json", head, {"Content-Encoding": "gzip"})


def test_a_compressed_answer_is_read_as_decoded():
    assert len(BOMB) < 1 << 20
    with Gzipping() as srv, OcrClient(srv.url) as client:
        assert client.models() == ["minicpm-ocr"]


def test_a_gzip_bomb_stops_at_the_limit_in_little_memory():
    with Gzipping() as srv:
        with OcrClient(srv.url, max_answer=1 << 20) as client:
            with pytest.raises(Exception, match="over 1048576"):
                client.metrics()
        # in a fresh process: the most memory it held stays within about the limit (8 MiB; 13 MB measured by VmHWM,
        # the body's buffer and its growth), far under the 512 MiB the body inflates to. httpx's own decoding
        # (iter_bytes) inflated each network read whole, 64 KiB of a bomb into about 64 MiB before the count could
        # stop it: 67-133 MB, which this bound fails; inflate.decoded hands on at most 64 KiB at a time.
        p = subprocess.run([sys.executable, "-c", PEAK_KB + (
            "import json, sys\n"
            "from ocrdeploy.sdk.client import OcrClient\n"
            "base = peak_kb()\n"
            "try:\n"
            "    OcrClient(sys.argv[1]).metrics()\n"
            "    print(json.dumps({'error': None}))\n"
            "except Exception as exc:\n"
            "    print(json.dumps({'error': str(exc), 'grew_kb': peak_kb() - base}))\n"), srv.url], capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2])
    out = json.loads(p.stdout)
    assert out["error"] and "over 8388608" in out["error"] and out["grew_kb"] < 2 * 8192 + 4096, out
