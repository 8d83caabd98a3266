"""inv verify against the stand-in server and a stand-in minicpmvocr that records its argv; the SDK pieces."""

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_services import cli, free_port, provision, site  # noqa: E402,F401 - `site` is a shared fixture

from ocrdeploy.sdk import samples  # noqa: E402
from ocrdeploy.sdk.client import OcrClient, ServiceError  # noqa: E402
from ocrdeploy.sdk.driver import check_output, parse_job  # noqa: E402

STANDIN_SDK = r'''#!{python}
"""Stand-in for the minicpmvocr CLI: records argv and env, writes the output given per sample page
(outputs.json beside it: what a faithful SDK run gives, unless a test says otherwise)."""
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
with open(os.path.join(here, "calls.jsonl"), "a") as fh:
    fh.write(json.dumps({{"argv": args, "env": {{k: os.environ.get(k) for k in
             ("OCR_LAYOUT_MODEL_DIR", "PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK")}}}}) + "\n")
inp, out = args[args.index("--input") + 1], args[args.index("--output") + 1]
page = os.path.basename(inp).split(".")[0]
with open(os.path.join(here, "outputs.json")) as fh:
    open(out, "w").write(json.load(fh)[page])
'''

# What the SDK writes for the project's sample pages when it reads them right (HTML tables, LaTeX formulas).
FAITHFUL = {
    "text": "# " + samples.TEXT[0] + "\n\n" + " ".join(samples.TEXT[2:]),
    "table": "Table 1: speculative decoding\n\n<table>" + "".join(
        "<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in samples.TABLE) + "</table>",
    "formula": "Equation 1\n\n$$x = \\frac{a + b}{2c}$$\n\nwhere the mean of n samples is the sum of x_i divided by n.",
}


def sdk_env(wd: Path, **outputs):
    b = wd / "sdk-env" / "bin"
    b.mkdir(parents=True)
    paddle = wd / "sdk-env" / "lib" / "python3.10" / "site-packages" / "paddlepaddle-3.2.1.dist-info"
    paddle.mkdir(parents=True)
    (wd / "sdk-env" / "pyvenv.cfg").write_text("version = 3.10.12\n")
    script = b / "minicpmvocr"
    script.write_text(STANDIN_SDK.format(python=sys.executable))
    (b / "outputs.json").write_text(json.dumps({**FAITHFUL, **outputs}))
    script.chmod(0o755)
    (wd / "minicpmvocr-sdk" / "configs" / "backends").mkdir(parents=True)
    layout = wd / "models" / "PP-DocLayoutV3_infer"
    layout.mkdir(parents=True)
    state = json.loads((wd / ".ocrdeploy" / "state.json").read_text())
    state["models"]["PP-DocLayoutV3_infer"] = {"path": str(layout), "kind": "layout", "files": {}}
    (wd / ".ocrdeploy" / "state.json").write_text(json.dumps(state))
    return b / "calls.jsonl"


def checks_of(p):
    return {c["check"]: c for c in json.loads(p.stdout)["hosts"]["localhost"]["checks"]}


def test_verify_reports_every_check(site):
    wd, inv = site
    provision(wd)
    calls = sdk_env(wd)
    port = free_port()
    assert cli("serve", ["--port", str(port)], inv).returncode == 0
    p = cli("verify", ["--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    c = checks_of(p)
    assert c["readiness"]["status"] == "passed" and c["smoke request"]["status"] == "passed"
    assert c["DSpark counters"]["status"] == "passed" and "accept length 6.333" in c["DSpark counters"]["detail"]
    for page in ("text", "table", "formula"):
        assert c[f"parse: {page} page"]["status"] == "passed", c[f"parse: {page} page"]
    assert c["two-end verification"]["status"] == "not run"
    recorded = [json.loads(line) for line in calls.read_text().splitlines()]
    argv = recorded[0]["argv"]
    assert argv[:3] == ["parse", "--config", f"{wd}/minicpmvocr-sdk/configs/backends/vllm.yaml"]
    assert argv[argv.index("--server-url") + 1] == f"http://127.0.0.1:{port}"
    assert argv[argv.index("--model") + 1] == "minicpm-ocr"
    sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
    assert "input.limit=1" in sets and "layout.device=cpu" in sets          # CPU paddle in sdk-env
    assert any(s.startswith("run.run_tag=verify-") for s in sets)
    assert all(argv[argv.index(flag) + 1].startswith("/") for flag in ("--input", "--output"))
    assert recorded[0]["env"] == {"OCR_LAYOUT_MODEL_DIR": f"{wd}/models/PP-DocLayoutV3_infer",
                                  "PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK": "True"}
    assert len({json.loads(x)["argv"][json.loads(x)["argv"].index("--set", 6) + 1] for x in
                calls.read_text().splitlines()}) >= 1


def test_verify_fails_on_otsl_and_never_claims_what_it_did_not_run(site):
    wd, inv = site
    provision(wd)
    sdk_env(wd, table="<otsl><fcel>Model<nl></otsl>")
    assert cli("serve", ["--standard", "--port", str(free_port())], inv).returncode == 0
    p = cli("verify", ["--json"], inv)
    assert p.returncode == 1
    c = checks_of(p)
    assert c["parse: table page"]["status"] == "failed" and "no <otsl> left" in c["parse: table page"]["detail"]
    assert c["DSpark counters"]["status"] == "not run"      # a standard service has none to prove


def test_two_end_verification_with_the_users_scripts(site, tmp_path):
    wd, inv = site
    provision(wd)
    for env in ("tf-ocr-env",):
        (wd / env / "bin").mkdir(parents=True)
        os.symlink(sys.executable, wd / env / "bin" / "python")
    script = tmp_path / "verify_side.py"
    script.write_text("print('prompt tokens: 1975')\nprint('<otsl><ched>a<nl></otsl>')\n")
    assert cli("serve", ["--port", str(free_port())], inv).returncode == 0
    p = cli("verify", ["--json", "--verify-transformers", str(script), "--verify-vllm", str(script)], inv)
    c = checks_of(p)
    assert c["two-end verification"]["status"] == "passed", c["two-end verification"]
    assert "same prompt tokens (1975)" in c["two-end verification"]["detail"]




def test_client_explains_400_and_reads_content(site):
    wd, inv = site
    provision(wd)
    port = free_port()
    assert cli("serve", ["--port", str(port)], inv).returncode == 0
    with OcrClient(f"http://127.0.0.1:{port}") as client:
        assert client.models() == ["minicpm-ocr"] and client.health()
        assert "lazy dog" in client.chat_image(samples.png(), "read")
        assert "vllm:spec_decode_num_drafts_total" in client.metrics()
    cli("stop", [], inv)
    port = free_port()
    (wd / "models" / "MiniCPM-OCR-1.0" / "standin.json").write_text("{}")
    # a server started without --trust-request-mm-kwargs: run the stand-in by hand with the standard flags minus it
    import subprocess
    proc = subprocess.Popen([str(wd / "vllm-ocr-env" / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server",
                             "--model", str(wd / "models" / "MiniCPM-OCR-1.0"), "--served-model-name", "minicpm-ocr",
                             "--port", str(port), "--host", "127.0.0.1"], stdout=subprocess.DEVNULL)
    try:
        with OcrClient(f"http://127.0.0.1:{port}") as client:
            import time
            for _ in range(50):
                if client.health():
                    break
                time.sleep(0.1)
            with pytest.raises(ServiceError) as err:
                client.chat_image(samples.png(), "read", mm_processor_kwargs={"downsample_mode": "4x"})
        assert err.value.status == 400 and "--trust-request-mm-kwargs" in err.value.explanation
    finally:
        proc.terminate()
        proc.wait()


def test_parse_job_follows_the_guide():
    job = parse_job("/w/sdk-env/bin/minicpmvocr", "/w/minicpmvocr-sdk", "transformers",
                    ["http://127.0.0.1:18499", "http://127.0.0.1:18500"], "/d/in.pdf", "/d/out.md",
                    layout_dir="/w/models/L", run_root="/big/runs", run_tag="t1")
    a = job.argv
    assert a[a.index("--config") + 1] == "/w/minicpmvocr-sdk/configs/backends/openai.yaml"
    assert [a[i + 1] for i, x in enumerate(a) if x == "--server-url"] == ["http://127.0.0.1:18499",
                                                                          "http://127.0.0.1:18500"]
    sets = [a[i + 1] for i, x in enumerate(a) if x == "--set"]
    assert sets == ["input.limit=1", 'engine.extra_body={"chat_template_kwargs":{"enable_thinking":false}}',
                    "run.run_tag=t1", "run.run_root=/big/runs"]
    with pytest.raises(ValueError, match="absolute"):
        parse_job("m", "/r", "dspark", ["u"], "rel.pdf", "/o.md", layout_dir="/l")


def test_output_checks():
    assert all(ok for _, ok, _ in check_output(FAITHFUL["table"], "table"))
    assert not dict((c, ok) for c, ok, _ in check_output("<otsl>x</otsl>", "table"))["no <otsl> left"]
    assert dict((c, ok) for c, ok, _ in check_output("$x=\\frac{a}{b}$", "formula"))["LaTeX on the formula page"]
    for page in ("text", "table", "formula"):
        assert all(ok for _, ok, _ in check_output(FAITHFUL[page], page)), check_output(FAITHFUL[page], page)


def test_output_checks_read_the_content_of_the_sample_pages():
    """Right shape, wrong content: the audit's outputs pass the shape checks and fail here, saying what is missing."""
    def content(md, page):
        return check_output(md, page)[-1]
    check, ok, detail = content("aaa bbb ccc ddd eee fff ggg hhh iii jjj kkk lll mmm nnn ooo", "text")
    assert not ok and check == "the text page's words" and "'quick'" in detail and "missing" in detail
    check, ok, detail = content("<table></table>", "table")
    assert not ok and check == "the table's cells" and "0 of 9 cells" in detail and "'minicpm-ocr 1.0'" in detail
    check, ok, detail = content("$$x^{2}$$", "formula")
    assert not ok and check == "the formula's tokens" and "'\\\\frac'" in detail and "'+'" in detail
    # a near miss on each page is still judged by its threshold
    one_word_off = FAITHFUL["text"].replace("lazy", "hazy")
    assert content(one_word_off, "text")[1]                                  # 1 of ~40 words: above 85 %
    swapped = "$$x = \\frac{2c}{a + b}$$"
    ok, detail = content(swapped, "formula")[1:]
    assert not ok and "'a' not in the numerator" in detail
    half = FAITHFUL["table"].replace("<td>6.2</td>", "<td></td>").replace("<td>0.1B</td>", "<td>?</td>")
    assert not content(half, "table")[1]                                     # 7 of 9 < 85 %
    garbage = "的的的的的的的的的的的的的的的的的的的的的的" * 5
    assert not dict((c, ok) for c, ok, _ in check_output(garbage, "text"))["readable text on the text page"]
    assert not dict((c, ok) for c, ok, _ in check_output("", "text"))["non-empty"]


def test_sample_pages_are_valid_documents():
    for make in samples.PAGES.values():
        pdf = make()
        assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF") and b"/Helvetica" in pdf
    png = samples.png()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png.endswith(b"IEND\xaeB`\x82")


def test_parse_first_page_then_all(site, tmp_path):
    wd, inv = site
    provision(wd)
    calls = sdk_env(wd)
    assert cli("serve", ["--port", str(free_port())], inv).returncode == 0
    doc = tmp_path / "text.pdf"
    doc.write_bytes(samples.text_page())
    out = tmp_path / "text.md"
    p = cli("parse", ["--input", str(doc), "--output", str(out), "--all-pages", "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    steps = json.loads(p.stdout)["steps"]
    assert [s["pages"] for s in steps] == ["first", "all"] and out.exists()
    argvs = [json.loads(line)["argv"] for line in calls.read_text().splitlines()]
    assert "input.limit=1" in argvs[0] and "input.limit=1" not in argvs[1]
    assert cli("parse", ["--input", "rel.pdf", "--output", str(out)], inv).returncode == 2
