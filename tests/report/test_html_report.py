"""The HTML report opened in a real headless browser (Debian's chromium, which .ci/run installs): the page
images, the rendered tables and the plot are there, and nothing is fetched while it renders, even when a
server's answer carries references to a listener on this machine."""

import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parents[1] / "commands"))

from ocrserver import OcrServer, sha  # noqa: E402
from test_verify import FAITHFUL  # noqa: E402

from ocrdeploy.report.html import CSP, answer_html, bench_report, verify_report  # noqa: E402
from ocrdeploy.sdk import bench, pages as pages_mod  # noqa: E402

REFERENCE = re.compile(r"""(?i)(?:\b(?:src|href|action|poster|data|xlink:href|srcset)\s*=\s*["']?\s*(?:https?:)?//)"""
                       r"""|url\(\s*["']?\s*(?:https?:)?//|@import""")


class Canary:
    """A listener on 127.0.0.1 that counts every request made to it."""

    def __init__(self):
        self.hits = []
        canary = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                canary.hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def chromium():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run must apt-get install chromium")
        pytest.skip("chromium not installed (apt-get install chromium)")
    return exe


def browse(html_file: Path, tmp: Path, *extra) -> subprocess.CompletedProcess:
    argv = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={tmp / 'profile'}", *extra,
            html_file.as_uri()]
    return subprocess.run(argv, capture_output=True, text=True, timeout=240)


@pytest.fixture(scope="module")
def run_with_hostile_answer():
    pages = pages_mod.sample_pages()
    canary = Canary()
    hostile = (FAITHFUL["text"] + f'\n\n<img src="{canary.url}/img"> ![x]({canary.url}/md) '
               f'<link rel="stylesheet" href="{canary.url}/css"><script>fetch("{canary.url}/js")</script>'
               f'<iframe src="{canary.url}/frame"></iframe> <{canary.url}/autolink>')
    answers = {sha(p.image): hostile if p.kind == "text" else FAITHFUL[p.kind] for p in pages}
    with OcrServer(answers) as srv:
        doc = bench.run(srv.url, pages, levels=(1, 2), requests=3, warmup=0)
    yield doc, {p.name: (p.mime, p.image) for p in pages}, canary
    canary.close()


def test_the_report_in_a_real_browser(run_with_hostile_answer, tmp_path):
    doc, images, canary = run_with_hostile_answer
    out = tmp_path / "report.html"
    out.write_text(bench_report(doc, images), encoding="utf-8")
    text = out.read_text()
    assert f'http-equiv="Content-Security-Policy" content="{CSP}"' in text and "default-src 'none'" in CSP
    assert not REFERENCE.findall(text), REFERENCE.findall(text)

    shot = tmp_path / "report.png"
    p = browse(out, tmp_path, f"--screenshot={shot}", "--window-size=1300,2600", "--hide-scrollbars")
    assert shot.exists(), p.stderr[-2000:]
    dom = browse(out, tmp_path, "--dump-dom").stdout
    assert canary.hits == [], canary.hits                    # nothing fetched while it rendered
    # the three page images, as data: URLs, in the rendered document
    assert len(re.findall(r'<img alt="(?:text|table|formula)" src="data:image/png;base64,', dom)) == 3
    # the table page's answer rendered as a table (not as escaped text), the formula as its LaTeX source
    assert re.search(r"<div class=\"answer\"><p>Table 1: speculative decoding</p>\s*<table>(?:<tbody>)?<tr><td>Model</td>", dom)
    assert '<code class="tex">x = \\frac{a + b}{2c}</code>' in dom
    assert "<svg" in dom and "pages/min" in dom                # the plot, inline
    # the hostile markup is shown as text, not made into elements
    assert "&lt;img src=" in dom and "<iframe" not in dom and "<script>fetch" not in dom

    from PIL import Image

    img = Image.open(shot).convert("RGB")
    colours = {c for _, c in img.getcolors(maxcolors=1 << 20)}
    assert (31, 119, 180) in colours and (44, 160, 44) in colours   # the plot's pages/min and accuracy lines drawn
    assert img.size == (1300, 2600)
    print(f"screenshot: {shot}")


def test_every_answer_tag_but_the_table_ones_is_text():
    out = answer_html('<table><tr><td colspan="2">a</td></tr></table>\n\n<b onmouseover="x()">b</b> '
                      '<td style="background:url(//evil)">c</td> $a<b$')
    assert '<td colspan="2">a</td>' in out and "&lt;b onmouseover" in out
    assert "&lt;td style=" in out and '<code class="tex">a&lt;b</code>' in out


def test_verify_report_shows_each_parsed_page_beside_its_output():
    pages = pages_mod.sample_pages()
    doc = {"hosts": {"gpu1": {"checks": [
        {"check": "readiness", "status": "passed", "detail": "ok"},
        {"check": "parse: table page", "status": "failed", "detail": "the table's cells: 6 of 9 cells",
         "output": "<table><tr><td>Model</td></tr></table>"}]}, "gpu2": {"error": "unreachable"}}}
    html = verify_report(doc, {p.name: (p.mime, p.image) for p in pages})
    assert '<img alt="table" src="data:image/png;base64,' in html and "<td>Model</td>" in html
    assert "6 of 9 cells" in html and "unreachable" in html and not REFERENCE.findall(html)
