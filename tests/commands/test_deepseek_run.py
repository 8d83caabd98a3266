"""inv deepseek-run against stand-ins of DeepSeek-OCR's three batch scripts, locally and over a real sshd."""

import json
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from test_services import SMI, cli, site  # noqa: E402,F401 - `site` is a shared fixture
from test_deepseek_verify import ds_site  # noqa: E402

from ocrdeploy.sdk import samples  # noqa: E402

# Stand-ins for run_dpsk_ocr_image.py and run_dpsk_ocr_eval_batch.py: they import config.py as the
# real ones do, print as they go (the image script streams its text) and write under OUTPUT_PATH.
IMAGE_STANDIN = r'''
import json, os, sys
sys.path.insert(0, os.getcwd())
from config import INPUT_PATH, OUTPUT_PATH
behave = json.load(open("standin.json")) if os.path.exists("standin.json") else {}
if behave.get("oom"):
    print("Traceback (most recent call last):")
    print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
          "of 23.55 GiB of which 1.02 GiB is free.")
    sys.exit(1)
files = [os.path.join(INPUT_PATH, f) for f in sorted(os.listdir(INPUT_PATH))] if os.path.isdir(INPUT_PATH) \
    else [INPUT_PATH]
os.makedirs(OUTPUT_PATH, exist_ok=True)
for f in files:
    print("# streamed text of " + os.path.basename(f), flush=True)
    open(os.path.join(OUTPUT_PATH, os.path.splitext(os.path.basename(f))[0] + ".md"), "w").write("# text\n")
'''
EVAL_STANDIN = r'''
import os, sys
sys.path.insert(0, os.getcwd())
from config import INPUT_PATH, OUTPUT_PATH
os.makedirs(OUTPUT_PATH, exist_ok=True)
open(os.path.join(OUTPUT_PATH, "eval_report.json"), "w").write('{"samples": %d}' % len(os.listdir(INPUT_PATH)))
print("evaluated", len(os.listdir(INPUT_PATH)), "samples")
'''


def batch_site(wd, behave=None):
    vdir, original = ds_site(wd, behave)
    (vdir / "run_dpsk_ocr_image.py").write_text(IMAGE_STANDIN)
    (vdir / "run_dpsk_ocr_eval_batch.py").write_text(EVAL_STANDIN)
    return vdir, original


def host_doc(p, host="localhost"):
    return json.loads(p.stdout)["hosts"][host]


def test_a_pdf_goes_through_the_pdf_script_and_the_config_comes_back(site, tmp_path):
    wd, inv = site
    vdir, original = batch_site(wd)
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(samples.deepseek_document())
    p = cli("deepseek-run", ["--input", str(pdf), "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    r = host_doc(p)
    assert r["script"] == "run_dpsk_ocr_pdf.py" and r["exit_code"] == 0
    assert r["output_dir"] == f"{wd}/deepseek-output" and r["outputs"] == [f"{wd}/deepseek-output/report.mmd"]
    assert "<--- Page Split --->" in Path(r["outputs"][0]).read_text()
    assert (vdir / "config.py").read_text() == original          # INPUT/OUTPUT_PATH were for this run only
    assert "vision tokens" not in Path(r["log"]).read_text()     # the user's PRINT_NUM_VIS_TOKENS (False) held


def test_images_stream_and_a_directory_takes_the_image_script(site, tmp_path):
    wd, inv = site
    batch_site(wd)
    pages = tmp_path / "scans"
    pages.mkdir()
    for name in ("a.png", "b.jpg"):
        (pages / name).write_bytes(samples.png())
    out = tmp_path / "results"
    p = cli("deepseek-run", ["--input", str(pages), "--output", str(out)], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "localhost | # streamed text of a.png" in p.stdout and "localhost | # streamed text of b.jpg" in p.stdout
    assert "run_dpsk_ocr_image.py done" in p.stdout and "2 files" in p.stdout
    assert sorted(x.name for x in out.iterdir()) == ["a.md", "b.md"]
    p = cli("deepseek-run", ["--input", str(pages / "a.png"), "--output", str(tmp_path / "one"), "--json"], inv)
    assert host_doc(p)["script"] == "run_dpsk_ocr_image.py" and len(host_doc(p)["outputs"]) == 1
    assert "# streamed text of a.png" in p.stderr          # with --json the stream goes to stderr


def test_eval_runs_the_benchmark_script_on_a_directory_only(site, tmp_path):
    wd, inv = site
    batch_site(wd)
    bench = tmp_path / "omnidocbench"
    bench.mkdir()
    for i in range(3):
        (bench / f"{i}.png").write_bytes(samples.png())
    p = cli("deepseek-run", ["--input", str(bench), "--eval", "--json"], inv)
    assert p.returncode == 0 and host_doc(p)["script"] == "run_dpsk_ocr_eval_batch.py"
    assert json.loads(Path(host_doc(p)["outputs"][0]).read_text()) == {"samples": 3}
    p = cli("deepseek-run", ["--input", str(bench / "0.png"), "--eval"], inv)
    assert p.returncode == 1 and "--eval takes a benchmark directory" in p.stdout


def test_out_of_memory_is_diagnosed_with_the_downgrade(site, tmp_path):
    wd, inv = site
    vdir, original = batch_site(wd, {"oom": True})
    (tmp_path / "p.png").write_bytes(samples.png())
    p = cli("deepseek-run", ["--input", str(tmp_path / "p.png")], inv)
    assert p.returncode == 1
    assert "run_dpsk_ocr_image.py exited 1" in p.stdout
    assert "diagnosis cuda-oom" in p.stdout and "inv deepseek-config --downgrade" in p.stdout
    assert (vdir / "config.py").read_text() == original


@pytest.mark.parametrize("args,needle,code", [
    (["--input", "relative/doc.pdf"], "--input relative/doc.pdf: a path on the host, and it must be absolute", 2),
    (["--input", "/abs/doc.pdf", "--output", "out"], "--output out: a path on the host", 2),
    ([], "--input PATH is required", 2),
])
def test_usage_errors_are_one_line(site, args, needle, code):
    wd, inv = site
    p = cli("deepseek-run", args, inv)
    assert p.returncode == code and needle in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_what_cannot_run_says_so(site, tmp_path):
    wd, inv = site
    p = cli("deepseek-run", ["--input", "/nonexistent/doc.pdf"], inv)
    assert p.returncode == 1 and "the DeepSeek-OCR checkout is missing" in p.stdout
    batch_site(wd)
    p = cli("deepseek-run", ["--input", "/nonexistent/doc.pdf"], inv)
    assert p.returncode == 1 and "/nonexistent/doc.pdf does not exist on the host" in p.stdout
    (tmp_path / "notes.txt").write_text("x")
    p = cli("deepseek-run", ["--input", str(tmp_path / "notes.txt")], inv)
    assert p.returncode == 1 and "neither a PDF, an image" in p.stdout


@pytest.mark.ssh
def test_deepseek_run_over_ssh(lab, tmp_path):
    h = lab.start("dsrun", "127.0.0.13", path_prefix=str(SMI))
    wd = tmp_path / "rwd"
    vdir, original = batch_site(wd)
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"gpu": lab.inventory_entry(h, workdir=str(wd))}}}))
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(samples.deepseek_document())
    p = cli("deepseek-run", ["--host", "gpu", "--input", str(pdf), "--json"], inv,
            env={"OCRDEPLOY_KNOWN_HOSTS": str(lab.known_hosts)})
    assert p.returncode == 0, p.stdout + p.stderr
    r = host_doc(p, "gpu")
    assert r["outputs"] == [f"{wd}/deepseek-output/doc.mmd"] and Path(r["log"]).exists()
    assert (vdir / "config.py").read_text() == original
