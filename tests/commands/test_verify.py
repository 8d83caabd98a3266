"""inv verify against the stand-in server and a stand-in minicpmvocr that records its argv; the SDK pieces.

The stand-in server stands for a multimodal MiniCPM-OCR on a GPU (image answers, DSpark counters), which
no engine here can serve; verify against real engines is in test_services_engines.py (marker engine).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_services import FIX, cli, free_port, provision, site  # noqa: E402,F401 - `site` is a shared fixture

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
    tags = [next(a for a in r["argv"] if a.startswith("run.run_tag=")) for r in recorded]
    assert len(recorded) == 3 and len(set(tags)) == 3             # one SDK run per page, each its own run


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


# What the feat-ocr scripts print, as the guide's section 7 shows it (reference values for a 1080x1080 table
# image: prompt 1975 tokens, vision 1936 tokens, generation 284 tokens, output 677 characters; 1.300B
# parameters on the transformers side).  The scripts are not public: these stand-ins print those lines and
# record where they ran (interpreter, CUDA_VISIBLE_DEVICES, CUDA_HOME).
SIDE_SCRIPT = r"""import json, os, sys
side = os.path.basename(__file__).split(".")[0]
with open(__file__ + ".json", "w") as fh:
    json.dump({"python": sys.executable, "argv": sys.argv[1:],
               "env": {k: os.environ.get(k) for k in ("CUDA_VISIBLE_DEVICES", "CUDA_HOME", "PATH")}}, fh)
print(%r, file=sys.stderr)
print("prompt %d tokens, vision 1936 tokens, generation 284 tokens, output 677 characters")
print("<otsl><ched>Model<ched>Params<nl><fcel>MiniCPM-OCR 1.0<fcel>1.3B<nl></otsl>")
"""
TF_LOAD_OK = "Loading weights: 100%| 1021/1021\nMiniCPMOCRForConditionalGeneration parameters: 1.300B"


def sides(tmp_path, tf_log=TF_LOAD_OK, tf_prompt=1975, vllm_prompt=1975):
    tf, vl = tmp_path / "verify_transformers.py", tmp_path / "verify_vllm.py"
    tf.write_text(SIDE_SCRIPT % (tf_log, tf_prompt))
    vl.write_text(SIDE_SCRIPT % ("INFO vLLM engine ready", vllm_prompt))
    return tf, vl


def merged_env(wd):
    """An ocr-env (the guide's merged env) whose python runs the scripts; no tf-ocr-env, no vllm-ocr-env."""
    env = wd / "ocr-env"
    (env / "bin").mkdir(parents=True)
    os.symlink(os.path.realpath(sys.executable), env / "bin" / "python")
    (env / "pyvenv.cfg").write_text("version = 3.13.9\n")
    return env


def test_two_end_verification_in_the_merged_env_on_a_free_gpu(site, tmp_path):
    wd, inv = site
    provision(wd)
    merged = merged_env(wd)
    box = FIX / "nvidia-smi" / "3gpu-busy0"          # GPU 0 busy (pid 48213); the service is put there too
    env = {"PATH": f"{box}:{os.environ['PATH']}"}
    assert cli("serve", ["--port", str(free_port()), "--gpu", "0"], inv, env=env).returncode == 0
    import shutil
    shutil.rmtree(wd / "vllm-ocr-env")                 # the running service keeps its files open; only ocr-env left
    tf, vl = sides(tmp_path)
    p = cli("verify", ["--json", "--verify-transformers", str(tf), "--verify-vllm", str(vl)], inv, env=env)
    c = checks_of(p)["two-end verification"]
    assert c["status"] == "passed", c
    assert "same prompt tokens (1975)" in c["detail"] and "1.300B parameters" in c["detail"]
    ran = {side: json.loads(Path(f"{s}.json").read_text()) for side, s in (("tf", tf), ("vllm", vl))}
    for side in ran.values():
        assert side["python"] == str(merged / "bin" / "python") or os.path.realpath(side["python"]) == \
            os.path.realpath(sys.executable)
        assert side["env"]["CUDA_VISIBLE_DEVICES"] in ("1", "2")       # a free card, not the service's GPU 0
        assert side["argv"][side["argv"].index("--prompt") + 1] == "请识别图中的表格并输出 OTSL"
    cu = f"{merged}/lib/python3.13/site-packages/nvidia/cu13"
    assert ran["vllm"]["env"]["CUDA_HOME"] == cu and ran["vllm"]["env"]["PATH"].startswith(f"{merged}/bin:{cu}/bin:")
    assert ran["tf"]["env"]["CUDA_HOME"] is None or ran["tf"]["env"]["CUDA_HOME"] != cu
    # each script's own command line, as the guide's section 7 runs it (a misspelt flag is a script that exits 2)
    for side, tail in (("tf", ["--attn", "sdpa", "--max-new-tokens", "512"]), ("vllm", ["--max-tokens", "512"])):
        argv = ran[side]["argv"]
        assert argv[:2] == ["--model", f"{wd}/models/MiniCPM-OCR-1.0"] and argv[2] == "--image", argv
        assert argv[4:] == ["--prompt", "请识别图中的表格并输出 OTSL", *tail], argv
    # audit M37: a table page at the guide's 1080x1080, the same file for both ends
    images = {side["argv"][side["argv"].index("--image") + 1] for side in ran.values()}
    (image,) = images
    head = Path(image).read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[16:24] == (1080).to_bytes(4, "big") * 2
    mine = tmp_path / "my-table.png"
    mine.write_bytes(head)
    p = cli("verify", ["--json", "--verify-transformers", str(tf), "--verify-vllm", str(vl), "--image", str(mine)],
            inv, env=env)
    ran = json.loads(Path(f"{tf}.json").read_text())
    assert ran["argv"][ran["argv"].index("--image") + 1] == str(mine)
    p = cli("verify", ["--image", "rel.png", "--verify-transformers", str(tf), "--verify-vllm", str(vl)], inv)
    assert p.returncode == 2 and "--image rel.png: give the image's absolute path" in p.stderr


@pytest.mark.parametrize("tf_log, tf_prompt, says", [
    # a transformers 5 load report (its shape from a real run: "BertForQuestionAnswering LOAD REPORT from:
    # bert-base-uncased / Key | Status / qa_outputs.weight | MISSING", a public user log of transformers 5)
    ("MiniCPMOCRForConditionalGeneration LOAD REPORT from: /m\nKey    | Status     | \n"
     "lm_head.weight | MISSING    | \nparameters: 1.300B", 1975, "transformers reported missing keys"),
    ("Some weights of the model checkpoint at /m were not used when initializing X: ['vpm.x']\nparameters: 1.300B",
     1975, "transformers reported unexpected keys"),
    ("parameters: 1.299B", 1975, "transformers parameter count 1.299B, want 1.300B"),
    ("nothing about parameters", 1975, "transformers parameter count not printed"),
    (TF_LOAD_OK, 1976, "prompt tokens transformers=1976 vllm=1975"),
])
def test_two_end_verification_fails_on_each_criterion(site, tmp_path, tf_log, tf_prompt, says):
    wd, inv = site
    provision(wd)
    (wd / "tf-ocr-env" / "bin").mkdir(parents=True)
    os.symlink(os.path.realpath(sys.executable), wd / "tf-ocr-env" / "bin" / "python")
    (wd / "tf-ocr-env" / "pyvenv.cfg").write_text("version = 3.10.12\n")
    assert cli("serve", ["--port", str(free_port())], inv).returncode == 0
    tf, vl = sides(tmp_path, tf_log=tf_log, tf_prompt=tf_prompt)
    p = cli("verify", ["--json", "--verify-transformers", str(tf), "--verify-vllm", str(vl)], inv)
    c = checks_of(p)["two-end verification"]
    assert p.returncode == 1 and c["status"] == "failed" and says in c["detail"], c
    ran = json.loads(Path(f"{vl}.json").read_text())
    assert ran["env"]["CUDA_HOME"] == f"{wd}/vllm-ocr-env/lib/python3.13/site-packages/nvidia/cu13"


def test_smoke_sends_the_sdks_mm_kwargs_and_explains_the_400(site):
    """A server started without --trust-request-mm-kwargs answers plain requests and rejects every SDK one."""
    wd, inv = site
    provision(wd)
    sdk_env(wd)
    port = free_port()
    proc = subprocess.Popen([str(wd / "vllm-ocr-env" / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server",
                             "--model", str(wd / "models" / "MiniCPM-OCR-1.0"), "--served-model-name", "minicpm-ocr",
                             "--port", str(port), "--host", "127.0.0.1"], stdout=subprocess.DEVNULL)
    try:
        wait_listening(port)
        p = cli("verify", ["--json", "--server-url", f"http://127.0.0.1:{port}", "--backend", "vllm"], inv)
        c = checks_of(p)
        assert p.returncode == 1 and c["readiness"]["status"] == "passed"
        smoke = c["smoke request"]
        assert smoke["status"] == "failed" and "HTTP 400" in smoke["detail"]
        assert "same request without mm_processor_kwargs is answered" in smoke["detail"]
        assert "--trust-request-mm-kwargs" in smoke["detail"] and '"downsample_mode": "4x"' in smoke["detail"]
    finally:
        proc.terminate()
        proc.wait()


def test_verify_an_existing_server_by_url(site):
    """The guide's SDK-only row: an OpenAI-compatible server ocrdeploy did not start."""
    wd, inv = site
    provision(wd)
    calls = sdk_env(wd)
    port = free_port()
    proc = subprocess.Popen([str(wd / "vllm-ocr-env" / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server",
                             "--model", str(wd / "models" / "MiniCPM-OCR-1.0"), "--served-model-name", "minicpm-ocr",
                             "--port", str(port), "--host", "127.0.0.1", "--api-key", "k3y"],
                            stdout=subprocess.DEVNULL)
    try:
        wait_listening(port)
        url = f"http://127.0.0.1:{port}"
        p = cli("verify", ["--json", "--server-url", url], inv)
        c = checks_of(p)
        assert p.returncode == 1 and c["readiness"]["status"] == "failed" and "--api-key" in c["readiness"]["detail"]
        p = cli("verify", ["--json", "--server-url", url + "/", "--api-key", "k3y"], inv)
        c = checks_of(p)
        assert p.returncode == 0, c
        assert c["smoke request"]["status"] == "passed" and "mm_processor_kwargs" not in c["smoke request"]["detail"]
        assert c["DSpark counters"]["status"] == "not run"
        for page in ("text", "table", "formula"):
            assert c[f"parse: {page} page"]["status"] == "passed", c[f"parse: {page} page"]
        argv = json.loads(calls.read_text().splitlines()[0])["argv"]
        assert argv[argv.index("--config") + 1].endswith("/configs/backends/openai.yaml")
        assert argv[argv.index("--server-url") + 1] == url
        assert 'engine.extra_body={"chat_template_kwargs":{"enable_thinking":false}}' in argv
    finally:
        proc.terminate()
        proc.wait()
    for bad, says in ((["--server-url", "localhost:18499"], "--server-url 'localhost:18499': give the server's base URL"),
                      (["--server-url", "http://h:99999"], "the port is not a number"),
                      (["--server-url", "http://h:1", "--backend", "tgi"], "--backend 'tgi': choose"),
                      (["--backend", "openai"], "--backend goes with --server-url")):
        p = cli("verify", bad, inv)
        assert p.returncode == 2 and says in p.stderr, p.stderr


def test_layout_device_is_the_chosen_gpu_with_gpu_paddle(site):
    wd, inv = site
    provision(wd)
    calls = sdk_env(wd)
    paddle = next((wd / "sdk-env" / "lib" / "python3.10" / "site-packages").glob("paddlepaddle-*"))
    paddle.rename(paddle.with_name("paddlepaddle_gpu-3.3.0.dist-info"))
    box = FIX / "nvidia-smi" / "3gpu-busy0"
    env = {"PATH": f"{box}:{os.environ['PATH']}"}
    assert cli("serve", ["--port", str(free_port())], inv, env=env).returncode == 0
    p = cli("verify", ["--json"], inv, env=env)
    assert checks_of(p)["parse: text page"]["status"] == "passed", p.stdout
    argv = json.loads(calls.read_text().splitlines()[0])["argv"]
    sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
    assert [s for s in sets if s.startswith("layout.device=")] in (["layout.device=cuda:1"], ["layout.device=cuda:2"])


def wait_listening(port):
    import socket
    import time
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


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
    for argv in argvs:                # the ready DSpark service's config, not --server-url's openai default
        assert argv[argv.index("--config") + 1].endswith("/configs/backends/vllm.yaml")
        assert argv[argv.index("--model") + 1] == "minicpm-ocr" and not any("extra_body" in a for a in argv)
    assert cli("parse", ["--input", "rel.pdf", "--output", str(out)], inv).returncode == 2


# transformers serve as the audit's R2 saw it (tests/commands/test_services_engines.py shows the real one):
# /health answers {"status": "ok"}, and a chat request naming anything but the directory it was given is a
# 400 "Server is pinned to ...".
TF_SERVE = r'''#!{python}
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
args = sys.argv[1:]
assert args[0] == "serve"
pinned, port = args[1], int(args[args.index("--port") + 1])
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def send(self, code, doc):
        data = json.dumps(doc).encode()
        self.send_response(code); self.send_header("Content-Length", str(len(data))); self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        self.send(200, {{"status": "ok"}}) if self.path == "/health" else self.send(500, {{"error": "no hub cache"}})
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body.get("model") != pinned:
            return self.send(400, {{"error": {{"message": "Server is pinned to '%s'" % pinned}}}})
        self.send(200, {{"choices": [{{"message": {{"content": "The quick brown fox."}}}}]}})
HTTPServer(("127.0.0.1", port), H).serve_forever()
'''


def tf_serve_env(wd):
    b = wd / "tf-ocr-env" / "bin"
    b.mkdir(parents=True)
    (wd / "tf-ocr-env" / "pyvenv.cfg").write_text("version = 3.13.9\n")
    (b / "transformers").write_text(TF_SERVE.format(python=sys.executable))
    (b / "transformers").chmod(0o755)


def test_a_transformers_service_gives_the_sdk_its_config_and_pinned_name(site, tmp_path):
    """Audit M27 and the wrong edit in parse.py: a ready transformers service means openai.yaml, thinking off
    and --model the directory transformers serve pins, for verify's pages and for inv parse."""
    wd, inv = site
    provision(wd)
    tf_serve_env(wd)
    calls = sdk_env(wd)
    port = free_port()
    p = cli("serve", ["--backend", "transformers", "--port", str(port), "--gpu", "none"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    main = f"{wd}/models/MiniCPM-OCR-1.0"
    assert f"--model {main}" in p.stdout
    p = cli("verify", ["--json"], inv)
    c = checks_of(p)
    assert c["smoke request"]["status"] == "passed", c["smoke request"]
    doc = tmp_path / "text.pdf"
    doc.write_bytes(samples.text_page())
    p = cli("parse", ["--input", str(doc), "--output", str(tmp_path / "text.md")], inv)
    argvs = [json.loads(line)["argv"] for line in calls.read_text().splitlines()]
    assert len(argvs) == 4
    for argv in argvs:
        assert argv[argv.index("--config") + 1] == f"{wd}/minicpmvocr-sdk/configs/backends/openai.yaml"
        assert argv[argv.index("--model") + 1] == main
        assert 'engine.extra_body={"chat_template_kwargs":{"enable_thinking":false}}' in argv
        assert argv[argv.index("--server-url") + 1] == f"http://127.0.0.1:{port}"


def test_parse_with_a_server_url_defaults_to_openai_like_verify_and_takes_model(site, tmp_path):
    """Audit M31: `inv parse --server-url` used vllm.yaml where `inv verify --server-url` uses openai; --model."""
    wd, inv = site
    provision(wd)
    calls = sdk_env(wd)
    doc = tmp_path / "text.pdf"
    doc.write_bytes(samples.text_page())
    out = str(tmp_path / "text.md")
    p = cli("parse", ["--input", str(doc), "--output", out, "--server-url", "http://127.0.0.1:9"], inv)
    p = cli("parse", ["--input", str(doc), "--output", out, "--server-url", "http://127.0.0.1:9", "--backend",
                      "vllm", "--model", "my-ocr"], inv)
    first, second = [json.loads(line)["argv"] for line in calls.read_text().splitlines()]
    assert first[first.index("--config") + 1].endswith("/openai.yaml") and first[first.index("--model") + 1] == \
        "minicpm-ocr"
    assert second[second.index("--config") + 1].endswith("/vllm.yaml") and second[second.index("--model") + 1] == \
        "my-ocr"
    for bad, says in ((["--model", "x"], "--model goes with --server-url"),
                      (["--server-url", "http://h:1", "--backend", "tgi"], "--backend 'tgi': choose")):
        p = cli("parse", ["--input", str(doc), "--output", out, *bad], inv)
        assert p.returncode == 2 and says in p.stderr, p.stderr


def test_the_sdk_gets_loopback_in_no_proxy_merged_with_the_users():
    """Audit M33: with a proxy set on the host the SDK's requests to 127.0.0.1 would go through it."""
    job = parse_job("/w/m", "/w/s", "dspark", ["http://127.0.0.1:1"], "/i.pdf", "/o.md", layout_dir="/l",
                    no_proxy="corp.example, 127.0.0.1")
    assert job.env["no_proxy"] == job.env["NO_PROXY"] == "corp.example,127.0.0.1,localhost,::1"
    job = parse_job("/w/m", "/w/s", "dspark", ["http://127.0.0.1:1"], "/i.pdf", "/o.md", layout_dir="/l")
    assert job.env["no_proxy"] == "127.0.0.1,localhost,::1"


@pytest.mark.parametrize("url,says", [
    ("http://[::1", "--server-url 'http://[::1': not a URL"),
    ("http://[::1]:99999", "the port is not a number 1-65535"),
    ("localhost:18499", "give the server's base URL"),
])
def test_a_server_url_urlsplit_cannot_read_is_one_line(url, says):
    from ocrdeploy.commands.verify import check_url
    from ocrdeploy.errors import UsageError

    with pytest.raises(UsageError) as exc:
        check_url(url)
    assert says in str(exc.value)


@pytest.mark.parametrize("kwargs,says", [
    ({"name": "a b"}, "--name 'a b' is not a service name"),
    ({"name": "../x"}, "--name '../x' is not a service name"),
    ({"scripts": ("/src/verify_transformers.py", None)}, "--verify-transformers needs --verify-vllm too"),
    ({"scripts": (None, "/src/verify_vllm.py")}, "--verify-vllm needs --verify-transformers too"),
    ({"scripts": ("verify_transformers.py", "/src/verify_vllm.py")},
     "--verify-transformers verify_transformers.py: give the script's absolute path on the host"),
    ({"scripts": ("/src/verify_transformers.py", "verify_vllm.py")},     # the flag named is the one given
     "--verify-vllm verify_vllm.py: give the script's absolute path on the host"),
])
def test_verify_options_are_checked_before_any_host_is_reached(kwargs, says):
    """A bad --name read as 'no running service lists minicpm-ocr', and one two-end script alone as 'not
    given': both are input errors, said before anything connects (the host here does not exist)."""
    from ocrdeploy.commands.verify import run_verify
    from ocrdeploy.errors import UsageError

    args = dict(host="nosuchhost.invalid", inventory=None, name=None, api_key=None, scripts=None, as_json=False,
                accept_new_host_keys=False, connect_timeout=None)
    with pytest.raises(UsageError) as exc:
        run_verify(**{**args, **kwargs})
    assert says in str(exc.value)
