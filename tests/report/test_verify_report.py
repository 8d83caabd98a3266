"""`inv verify --report FILE.html` against the serve stand-in and the stand-in minicpmvocr of test_verify.py:
the checks, and each sample page beside what the SDK wrote for it (one page read wrong)."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "commands"))
from test_services import cli, free_port, provision, site  # noqa: E402,F401 - `site` is a shared fixture
from test_verify import sdk_env  # noqa: E402

from test_html_report import REFERENCE  # noqa: E402


def test_verify_writes_its_report(site, tmp_path):
    wd, inv = site
    provision(wd)
    sdk_env(wd, table="<table><tr><td>Model</td><td>Params</td></tr></table>")
    assert cli("serve", ["--port", str(free_port())], inv).returncode == 0
    out = tmp_path / "verify.html"
    p = cli("verify", ["--report", str(out)], inv)
    assert p.returncode == 1, p.stdout + p.stderr                  # the table page lost cells
    html = out.read_text()
    assert len(re.findall(r'<img alt="(?:text|table|formula)" src="data:image/png;base64,', html)) == 3
    assert "<table><tr><td>Model</td><td>Params</td></tr></table>" in html     # the SDK's output, rendered
    assert "2 of 9 cells" in html and '<code class="tex">x = \\frac{a + b}{2c}</code>' in html
    assert "default-src 'none'" in html and not REFERENCE.findall(html)
    assert cli("verify", ["--report", str(tmp_path / "v.txt")], inv).returncode == 2
