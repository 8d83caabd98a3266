"""sdk/client.OcrClient reads every answer within its size limit as decoded: a real local HTTP server that
compresses its answers (as a proxy in front of a server may) is read right, and a small gzip body that
inflates to 64 MiB stops at the limit with little memory used."""

import gzip
import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from loopback import LoopbackServer
from ocrdeploy.sdk.client import OcrClient

MODELS = json.dumps({"object": "list", "data": [{"id": "minicpm-ocr"}]}).encode()
BOMB = gzip.compress(b"{" + b" " * (64 << 20) + b"}", compresslevel=9)     # ~64 KiB on the wire, 64 MiB inflated


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
        # in a fresh process: the most memory it held stays far under the 64 MiB the body inflates to
        p = subprocess.run([sys.executable, "-c", (
            "import json, resource, sys\n"
            "from ocrdeploy.sdk.client import OcrClient\n"
            "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "try:\n"
            "    OcrClient(sys.argv[1]).metrics()\n"
            "    print(json.dumps({'error': None}))\n"
            "except Exception as exc:\n"
            "    print(json.dumps({'error': str(exc), 'grew_kb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss"
            " - base}))\n"), srv.url], capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2])
    out = json.loads(p.stdout)
    assert out["error"] and "over 8388608" in out["error"] and out["grew_kb"] < 40_000, out
