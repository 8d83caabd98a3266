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


def test_a_bad_report_path_is_one_line_before_anything_runs(site, tmp_path):
    """--report in a directory that does not exist, or naming a directory: one line, exit 2, no traceback."""
    wd, inv = site
    provision(wd)
    (tmp_path / "dir.html").mkdir()
    for path, message in ((tmp_path / "missing" / "x.html", "no directory"), (tmp_path / "dir.html", "is a directory")):
        p = cli("verify", ["--server-url", "http://127.0.0.1:9", "--report", str(path)], inv)
        assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr, p.stderr[-2000:]
        assert len(p.stderr.strip().splitlines()) == 1


def test_a_report_that_cannot_be_written_is_one_line(tmp_path, monkeypatch):
    """Written after the run: a file system that refuses it is one line naming --report, exit 2."""
    import pytest

    from ocrdeploy.commands.verify import write_html
    from ocrdeploy.errors import UsageError

    target = tmp_path / "r.html"
    target.mkdir()                       # exists as a directory by the time the run ends
    with pytest.raises(UsageError, match=r"--report .*r\.html: Is a directory"):
        write_html(target, "<html></html>")
