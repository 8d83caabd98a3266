"""deepseek-verify against a stand-in run_dpsk_ocr_pdf.py, and inv verify against a DeepSeek-OCR service."""

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_services import cli, free_port, provision, site  # noqa: E402,F401 - `site` is a shared fixture

from ocrdeploy.recipes import deepseek  # noqa: E402
from ocrdeploy.commands import deepseek_verify as dv  # noqa: E402

# The stand-in prints what DeepSeek-OCR's script writes: <OUTPUT_PATH>/<name>.mmd with pages split by
# "<--- Page Split --->" and image placeholders like ![](images/0_0.jpg); it pins GPU 0 the way
# run_dpsk_ocr_pdf.py does (line 14 upstream) and says which GPU it got.
STANDIN = r'''
import json, os, sys
os.environ['VLLM_USE_V1'] = '0'
os.environ["CUDA_VISIBLE_DEVICES"] = '0'        # as the upstream scripts pin it, before CUDA starts
print("CUDA_VISIBLE_DEVICES=" + os.environ["CUDA_VISIBLE_DEVICES"])
from config import INPUT_PATH, OUTPUT_PATH, CROP_MODE, PRINT_NUM_VIS_TOKENS, BASE_SIZE
behave = json.load(open("standin.json")) if os.path.exists("standin.json") else {}
if behave.get("oom"):
    print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity "
          "of 39.39 GiB of which 612.00 MiB is free.")
    sys.exit(1)
pages = open(INPUT_PATH, "rb").read().count(b"/Type /Page /Parent")
left = ["Left column line %d: the first column is read first." % i for i in range(1, 9)]
right = ["Right column line %d: the second column comes after." % i for i in range(1, 9)]
columns = "\n".join(left + right) if CROP_MODE else "\n".join(x for pair in zip(left, right) for x in pair)
texts = ["# Document parsing with MiniCPM-OCR\n\nThe quick brown fox jumps over the lazy dog.",
         "| Model | Params | Accept length |\n|---|---|---|\n| MiniCPM-OCR 1.0 | 1.3B | 6.2 |",
         "Equation 1\n\n\\[x = \\frac{a + b}{2c}\\]",
         "Figure 1: throughput\n\n![](images/3_0.jpg)\n\nFigure 1. Requests per second for three settings.",
         "## A two-column page\n\n" + columns]
if behave.get("garbage"):
    texts[0] = "的" * 200
if pages == 1:
    texts = [texts[4]]
os.makedirs(OUTPUT_PATH, exist_ok=True)
def shapes(crops):   # what deepseek_ocr.py prints per image with PRINT_NUM_VIS_TOKENS (see deepseek-logs/)
    print("=====================")
    print("BASE: ", "torch.Size([1, %d, 1280])" % ((BASE_SIZE // 64) ** 2))
    print("PATCHES: ", "torch.Size([%d, 100, 1280])" % crops) if crops else print("NO PATCHES")
    print("=====================")
if PRINT_NUM_VIS_TOKENS:
    shapes(4 if CROP_MODE else 0)                       # vLLM's profiling pass, before the script's own output
print("\x1b[31mPDF loading .....\x1b[0m")
for i in range(pages):
    if PRINT_NUM_VIS_TOKENS:
        shapes(behave.get("crops", 6) if CROP_MODE else 0)
name = os.path.basename(INPUT_PATH).replace(".pdf", ".mmd")
open(os.path.join(OUTPUT_PATH, name), "w").write("".join(t + "\n\n<--- Page Split --->\n" for t in texts))
'''


def ds_site(wd: Path, behave=None, mode="gundam"):
    provision(wd)
    shutil.copytree(wd / "vllm-ocr-env", wd / deepseek.ENV, symlinks=True)
    vdir = wd / "DeepSeek-OCR" / deepseek.VLLM_DIR
    vdir.mkdir(parents=True)
    values, _ = deepseek.config_values(40, 8, mode=mode, model_path=str(wd / "models" / "DeepSeek-OCR"),
                                       input_path="/in", output_path="/out")
    values["PRINT_NUM_VIS_TOKENS"] = False
    original = deepseek.render_config("", values)
    (vdir / "config.py").write_text(original)
    (vdir / "run_dpsk_ocr_pdf.py").write_text(STANDIN)
    if behave:
        (vdir / "standin.json").write_text(json.dumps(behave))
    return vdir, original


def checks_of(p):
    return {c["check"]: c for c in json.loads(p.stdout)["hosts"]["localhost"]["checks"]}


def test_deepseek_verify_passes_and_restores_the_config(site):
    wd, inv = site
    vdir, original = ds_site(wd)
    p = cli("deepseek-verify", ["--json", "--compare-modes"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    c = checks_of(p)
    for name in ("run_dpsk_ocr_pdf.py", "Markdown heading (text page)", "| table (table page)",
                 "LaTeX (formula page)", "image placeholder (figure page)", "no repeated-character garbage",
                 "vision tokens per page"):
        assert c[name]["status"] == "passed", c[name]
    assert c["Gundam vs Base (two-column page)"]["detail"] == "Gundam: column order kept; Base: columns interleaved"
    assert (vdir / "config.py").read_text() == original       # the user's config is put back


def test_deepseek_verify_catches_garbage_and_too_many_vision_tokens(site):
    wd, inv = site
    ds_site(wd, {"garbage": True, "crops": 9})
    p = cli("deepseek-verify", ["--json"], inv)
    assert p.returncode == 1
    c = checks_of(p)
    assert c["no repeated-character garbage"]["status"] == "failed" and "SKIP_REPEAT" in \
        c["no repeated-character garbage"]["detail"]
    assert c["vision tokens per page"]["status"] == "failed" and "lower MAX_CROPS" in c["vision tokens per page"]["detail"]
    assert c["Gundam vs Base (two-column page)"]["status"] == "not run"


def test_deepseek_verify_without_the_stack_fails_and_says_why(site):
    wd, inv = site
    provision(wd)
    p = cli("deepseek-verify", ["--json"], inv)
    assert p.returncode == 1   # nothing verified is not a pass
    c = checks_of(p)
    assert c["run_dpsk_ocr_pdf.py"]["status"] == "failed" and "inv install --recipe deepseek-ocr-vllm085" in \
        c["run_dpsk_ocr_pdf.py"]["detail"]
    assert {x["status"] for n, x in c.items() if n != "run_dpsk_ocr_pdf.py"} == {"not run"}


def test_inv_verify_on_a_deepseek_service(site):
    wd, inv = site
    provision(wd)
    shutil.copytree(wd / "vllm-ocr-env", wd / "deepseek-vllm-env", symlinks=True)
    (wd / "models" / "DeepSeek-OCR").mkdir(parents=True)
    state = json.loads((wd / ".ocrdeploy" / "state.json").read_text())
    state["models"]["DeepSeek-OCR"] = {"path": str(wd / "models" / "DeepSeek-OCR")}
    (wd / ".ocrdeploy" / "state.json").write_text(json.dumps(state))
    assert cli("serve", ["--backend", "deepseek-upstream", "--port", str(free_port())], inv).returncode == 0
    c = checks_of(cli("verify", ["--json"], inv))
    assert c["readiness"]["status"] == "passed" and "deepseek-ai/DeepSeek-OCR" in c["readiness"]["detail"]
    assert c["smoke request"]["status"] == "passed"
    assert c["parse: table page"]["status"] == "not run"


@pytest.mark.parametrize("text,order", [("Left column line 1\nLeft column line 2\nRight column line 1", True),
                                        ("Left column line 1\nRight column line 1\nLeft column line 2", False),
                                        ("nothing", None)])
def test_column_order(text, order):
    assert dv.column_order(text) is order


LOG = Path(__file__).parents[1] / "fixtures" / "deepseek-logs" / "pdf-gundam-3pages.txt"


def upstream_stdout():
    return "".join(line for line in LOG.read_text().splitlines(keepends=True) if not line.startswith("#"))


def test_vision_tokens_parsed_from_the_upstream_shapes():
    seen = dv.vision_tokens(upstream_stdout())
    assert [v["tokens"] for v in seen] == [856, 856, 256]       # the profiling block before "PDF loading" is left out
    assert [(v["base"], v["crops"], v["patches"]) for v in seen] == [(256, 6, 600), (256, 6, 600), (256, 0, 0)]
    c = dv.vision_check(upstream_stdout(), "gundam", 3)
    assert c["status"] == "passed" and c["detail"].startswith("856, 856, 256 (256 for the global view")
    c = dv.vision_check(upstream_stdout(), "base", 3)           # Base prints 256 and no patches, or it did not apply
    assert c["status"] == "failed" and "did not take effect" in c["detail"]
    nine = upstream_stdout().replace("[6, 100, 1280]", "[9, 100, 1280]")
    c = dv.vision_check(nine, "gundam", 3)
    assert c["status"] == "failed" and "1156, 1156, 256: above 1000 means too many crops: lower MAX_CROPS" == c["detail"]
    assert dv.vision_check("no shapes at all", "gundam", 3)["status"] == "not run"


def test_vision_tokens_in_base_mode(site):
    wd, inv = site
    ds_site(wd, mode="base")
    c = checks_of(cli("deepseek-verify", ["--json"], inv))
    assert c["vision tokens per page"] == {"check": "vision tokens per page", "status": "passed",
                                           "detail": "256, 256, 256, 256, 256: Base mode gives 256 per page"}
