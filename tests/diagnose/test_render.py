"""What reaches the terminal and the exit code: log text shown as written, never as markup or escapes;
warnings alone are not errors; request echoes and downloads are not the service's failures."""

import io
import re
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from ocrdeploy.diagnose import scanner
from ocrdeploy.diagnose.engine import annotate, exit_code, fix_context, scan_local
from ocrdeploy.diagnose.render import render
from ocrdeploy.diagnose.table import load_table
from ocrdeploy.terminal import COLOUR

ROOT = Path(__file__).parents[2]
RULES = load_table()
OOM = "c++: fatal error: Killed signal terminated program cc1plus"


def report_of(tmp_path, text, name="x.log"):
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return annotate(scan_local([str(p)], RULES), RULES, fix_context())


def shown(reports):
    buf = io.StringIO()
    render(Console(file=buf, force_terminal=True, width=400, color_system="truecolor"), reports)
    return buf.getvalue()


def test_log_lines_keep_their_brackets_and_never_break_the_markup(tmp_path):
    """vLLM's `[rank0]:` prefix must be shown; a `[/]` or `[bold]` in a log line is text, not markup."""
    reps = report_of(tmp_path, f"[rank0]: [/] [bold]x[/bold] {OOM}\nINFO [/dim] after\n")
    out = shown(reps)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert f"[rank0]: [/] [bold]x[/bold] {OOM}" in plain
    assert "INFO [/dim] after" in plain


def test_escape_sequences_and_nuls_from_a_log_never_reach_the_terminal(tmp_path):
    """OSC ended by ST (ESC \\), a clipboard write (OSC 52), a title, and 400 NUL bytes in a context line."""
    hostile = (b"\x1b]52;c;ZWNobyBwd25lZA==\x1b\\\x1b]0;owned\x07 " + OOM.encode() + b"\n" + b"\x00" * 400 + b"\n"
               + b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ more\n")
    # the binary sniff looks at the start only: the NULs come after 8 KiB of text
    text = b"INFO fine\n" * 1000 + hostile
    out = shown(report_of(tmp_path, text))
    assert "compile-oom-killed" in out
    for seq in ("\x1b]", "\x1b\\", "\x00", "\x07"):
        assert seq not in out, repr(seq)
    assert "link more" in out


def test_the_scanner_strips_colour_with_the_terminal_regex():
    """One colour regex, in ocrdeploy.terminal; an OSC ended by ST is stripped before matching.  A local scan sends
    the scanner the same pattern: it keeps that object (re's cache, purged here as a long run evicts it, would not)."""
    re.purge()
    scan_local([], [])
    assert scanner.ANSI is COLOUR
    assert scanner.clean("\x1b]0;title\x1b\\" + OOM) == [OOM]


def test_a_warning_alone_exits_0_an_error_1(tmp_path):
    # a warning-severity entry (corpus: cog-vllm#38 for model-download-at-load)
    warn = report_of(tmp_path, "Using model meta-llama/Meta-Llama-3.1-8B-Instruct with SHA 5206a32e\n"
                               "Downloading 17 files...\n", "w.log")
    assert [(f["id"], f["severity"]) for f in warn[0]["findings"]] == [("model-download-at-load", "warning")]
    assert warn[0]["unrecognised"] == [] and exit_code(warn) == 0
    only_warning = [{"file": "w", "findings": [{"id": "model-download-at-load", "severity": "warning"}],
                     "harmless": [], "unrecognised": []}]
    assert exit_code(only_warning) == 0
    err = report_of(tmp_path, OOM + "\n", "e.log")
    assert exit_code(err) == 1


def test_request_text_echoed_at_info_is_not_a_failure(tmp_path):
    """A prompt that quotes an OOM, logged by vLLM when it receives the request, must not restart the service."""
    line = ("(APIServer pid=48190) INFO 10-19 12:40:00 [logger.py:43] Received request chatcmpl-9f2: prompt: "
            "'<|im_start|>user\\nWhy does torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB "
            "happen?<|im_end|>', params: SamplingParams(n=1, temperature=0.0), prompt_token_ids: None\n")
    (rep,) = report_of(tmp_path, line)
    assert rep["findings"] == [] and rep["unrecognised"] == []
    (rep,) = report_of(tmp_path, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert [f["id"] for f in rep["findings"]] == ["cuda-oom"]


def test_a_failed_download_from_a_local_mirror_is_not_the_service(tmp_path):
    """The layout tarball from a closed local URL: not explained with the service's curl hint."""
    download = ("requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=8765): Max retries "
                "exceeded with url: /PP-DocLayoutV3_infer.tar (Caused by NewConnectionError('<urllib3.connection."
                "HTTPConnection object at 0x7f3a>: Failed to establish a new connection: [Errno 111] Connection "
                "refused'))\n")
    (rep,) = report_of(tmp_path, download)
    assert "service-unreachable" not in [f["id"] for f in rep["findings"]]
    service = download.replace("port=8765", "port=18499").replace("/PP-DocLayoutV3_infer.tar", "/v1/chat/completions")
    (rep,) = report_of(tmp_path, service)
    assert [f["id"] for f in rep["findings"]] == ["service-unreachable"]


def test_the_remote_scanner_gets_the_colour_regex_with_the_request(tmp_path):
    """The scanner runs alone on a host (no package): the request carries the one regex.  Source and request go on stdin
    as scan_remote sends them (SCAN_LOADER): the scanner's source is past one argument's 128 KiB limit."""
    import json

    from ocrdeploy.diagnose.engine import SCAN_LOADER, wire_rules

    log = tmp_path / "c.log"
    log.write_bytes(b"\x1b]0;t\x1b\\\x1b[31m" + OOM.encode() + b"\x1b[0m\n")
    req = {"paths": [str(log)], "rules": wire_rules(RULES), "context": 0, "ansi": COLOUR.pattern}
    src = (ROOT / "ocrdeploy" / "diagnose" / "scanner.py").read_text()
    p = subprocess.run([sys.executable, "-c", SCAN_LOADER], input=json.dumps({"source": src, "request": json.dumps(req)}),
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    doc = json.loads(p.stdout.split(scanner.MARKER, 1)[1])
    assert doc[0]["findings"][0]["text"] == OOM, p.stderr
