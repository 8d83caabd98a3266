"""inv deepseek-run against stand-ins of DeepSeek-OCR's three batch scripts, locally and over a real sshd."""

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from test_services import SMI, cli, site  # noqa: E402,F401 - `site` is a shared fixture
from test_deepseek_verify import ds_site  # noqa: E402

from ocrdeploy.sdk import samples  # noqa: E402

# Stand-ins for run_dpsk_ocr_image.py and run_dpsk_ocr_eval_batch.py: they import config.py as the
# real ones do, pin CUDA_VISIBLE_DEVICES to '0' as they do, print as they go (the image script streams its
# text) and write under OUTPUT_PATH what the real ones write there (the image script: result.mmd for its one
# file; the eval script: OUTPUT_PATH + file name, with no '/' between).
IMAGE_STANDIN = r'''
import json, os, sys
os.environ["CUDA_VISIBLE_DEVICES"] = '0'        # run_dpsk_ocr_image.py line 10
from config import INPUT_PATH, OUTPUT_PATH
print("CUDA_VISIBLE_DEVICES=" + os.environ["CUDA_VISIBLE_DEVICES"], flush=True)
behave = json.load(open("standin.json")) if os.path.exists("standin.json") else {}
if behave.get("oom"):
    print("Traceback (most recent call last):")
    print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
          "of 23.55 GiB of which 1.02 GiB is free.")
    sys.exit(1)
image = open(INPUT_PATH, "rb")      # like load_image(INPUT_PATH): one file; a directory fails here
os.makedirs(OUTPUT_PATH + "/images", exist_ok=True)
print("# streamed text of " + os.path.basename(INPUT_PATH), flush=True)
open(os.path.join(OUTPUT_PATH, "result.mmd"), "w").write("# text of " + os.path.basename(INPUT_PATH) + "\n")
'''
EVAL_STANDIN = r'''
import glob, os, sys
from config import INPUT_PATH, OUTPUT_PATH
os.makedirs(OUTPUT_PATH, exist_ok=True)
for image in glob.glob(f"{INPUT_PATH}/*"):
    open(OUTPUT_PATH + image.split('/')[-1].replace('.png', '.md'), "w").write("# page\n")
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
    assert "BASE:" not in Path(r["log"]).read_text()     # the user's PRINT_NUM_VIS_TOKENS (False) held


def test_a_directory_runs_file_by_file_each_into_its_own_folder(site, tmp_path):
    wd, inv = site
    batch_site(wd)
    pages = tmp_path / "scans"
    pages.mkdir()
    for name in ("a.png", "b.jpg"):
        (pages / name).write_bytes(samples.png())
    (pages / "report.pdf").write_bytes(samples.deepseek_document())
    (pages / "notes.txt").write_text("not a document")
    (pages / "sub").mkdir()
    (pages / "sub" / "c.png").write_bytes(samples.png())        # the top level only
    out = tmp_path / "results"
    p = cli("deepseek-run", ["--input", str(pages), "--output", str(out)], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "localhost | [1/3] a.png: run_dpsk_ocr_image.py" in p.stdout
    assert "localhost | [3/3] report.pdf: run_dpsk_ocr_pdf.py" in p.stdout
    assert "localhost | # streamed text of a.png" in p.stdout and "localhost | # streamed text of b.jpg" in p.stdout
    assert "3 runs of run_dpsk_ocr_image.py and run_dpsk_ocr_pdf.py done" in p.stdout
    assert (out / "a.png" / "result.mmd").read_text() == "# text of a.png\n"      # no run overwrote another
    assert (out / "b.jpg" / "result.mmd").read_text() == "# text of b.jpg\n"
    assert "<--- Page Split --->" in (out / "report.pdf" / "report.mmd").read_text()
    assert sorted(x.name for x in out.iterdir()) == ["a.png", "b.jpg", "report.pdf"]
    p = cli("deepseek-run", ["--input", str(pages / "a.png"), "--output", str(tmp_path / "one"), "--json"], inv)
    r = host_doc(p)
    assert r["script"] == "run_dpsk_ocr_image.py" and r["outputs"] == [str(tmp_path / "one" / "result.mmd")]
    assert "# streamed text of a.png" in p.stderr          # with --json the stream goes to stderr
    (pages / "a.png").unlink(), (pages / "b.jpg").unlink(), (pages / "report.pdf").unlink()
    p = cli("deepseek-run", ["--input", str(pages)], inv)
    assert p.returncode == 1 and "holds no PDF or image (.jpg, .jpeg, .png) at its top level" in p.stdout


def test_the_run_uses_the_gpu_config_py_was_sized_for(site, tmp_path):
    wd, inv = site
    vdir, original = batch_site(wd)
    (tmp_path / "p.png").write_bytes(samples.png())
    busy0 = {"PATH": f"{SMI.parent / '3gpu-busy0'}:{os.environ['PATH']}"}
    p = cli("deepseek-run", ["--input", str(tmp_path / "p.png"), "--json"], inv, env=busy0)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "CUDA_VISIBLE_DEVICES=1" in p.stderr and host_doc(p)["gpu"] == "1"   # GPU 0 is busy: the free one
    (vdir / "config.py").write_text(original + "OCRDEPLOY_GPU = '2'\n")       # as deepseek-config records it
    p = cli("deepseek-run", ["--input", str(tmp_path / "p.png")], inv, env=busy0)
    assert "localhost | CUDA_VISIBLE_DEVICES=2" in p.stdout and "on GPU 2" in p.stdout
    p = cli("deepseek-run", ["--input", str(tmp_path / "p.png"), "--gpu", "0"], inv, env=busy0)
    assert "localhost | CUDA_VISIBLE_DEVICES=0" in p.stdout                    # asked for: shared on purpose
    (vdir / "config.py").write_text(original + "OCRDEPLOY_GPU = '0'\n")
    p = cli("deepseek-run", ["--input", str(tmp_path / "p.png")], inv, env=busy0)
    assert p.returncode == 1 and "GPU 0, which config.py is sized for, is busy (pid 48213)" in p.stdout
    p = cli("deepseek-run", ["--input", str(tmp_path / "p.png"), "--gpu", "x"], inv, env=busy0)
    assert p.returncode == 2 and "--gpu x: one GPU index" in p.stderr


def test_eval_runs_the_benchmark_script_on_a_directory_only(site, tmp_path):
    wd, inv = site
    batch_site(wd)
    bench = tmp_path / "omnidocbench"
    bench.mkdir()
    for i in range(3):
        (bench / f"{i}.png").write_bytes(samples.png())
    p = cli("deepseek-run", ["--input", str(bench), "--eval", "--json"], inv)
    assert p.returncode == 0 and host_doc(p)["script"] == "run_dpsk_ocr_eval_batch.py"
    # the script writes OUTPUT_PATH + name: given with its '/', the results land inside the output folder
    assert host_doc(p)["outputs"] == [f"{wd}/deepseek-output/{i}.md" for i in range(3)]
    p = cli("deepseek-run", ["--input", str(bench / "0.png"), "--eval"], inv)
    assert p.returncode == 1 and "--eval takes a benchmark directory" in p.stdout
    (bench / "index.pdf").write_bytes(samples.deepseek_document())
    p = cli("deepseek-run", ["--input", str(bench), "--eval"], inv)
    assert p.returncode == 1 and "--eval opens every file in" in p.stdout and "not images: index.pdf" in p.stdout
    (bench / "index.pdf").unlink()
    (bench / "more").mkdir()
    (bench / "more" / "9.png").write_bytes(samples.png())
    p = cli("deepseek-run", ["--input", str(bench), "--eval"], inv)
    assert p.returncode == 1 and "not images: more/" in p.stdout


def test_out_of_memory_gets_deepseeks_remedy_with_the_next_step(site, tmp_path):
    wd, inv = site
    vdir, original = batch_site(wd, {"oom": True})
    (tmp_path / "p.png").write_bytes(samples.png())
    p = cli("deepseek-run", ["--input", str(tmp_path / "p.png")], inv)
    assert p.returncode == 1
    assert "run_dpsk_ocr_image.py exited 1" in p.stdout and "diagnosis cuda-oom" in p.stdout
    out = " ".join(p.stdout.split())
    # one image alone ran out of memory: BASE_SIZE 640 first, and not MiniCPM's --gpu-memory-utilization
    assert ("fix: inv deepseek-config --downgrade --single-image-oom, then run again; next here: BASE_SIZE 640 "
            "(one image alone ran out of memory)") in out
    assert "--gpu-memory-utilization" not in out
    assert (vdir / "config.py").read_text() == original
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(samples.deepseek_document())
    p = cli("deepseek-run", ["--input", str(pdf), "--json"], inv)
    (f,) = host_doc(p)["findings"]
    assert f["id"] == "cuda-oom" and f["remedy"] == "deepseek-oom-downgrade"
    assert f["fix"].startswith("inv deepseek-config --downgrade, then run again; next here: MAX_CONCURRENCY 100 -> 30")
    # inv diagnose --fix on the run's log: the same remedy, because the log is a DeepSeek-OCR run's
    p = cli("diagnose", ["--log", host_doc(p)["log"], "--fix"], inv)
    assert "[cuda-oom] by hand: inv deepseek-config --downgrade, then run again" in " ".join(p.stdout.split())
    other = tmp_path / "vllm.log"
    other.write_text(Path(host_doc(cli("deepseek-run", ["--input", str(pdf), "--json"], inv))["log"]).read_text())
    p = cli("diagnose", ["--log", str(other), "--fix"], inv)      # a service log elsewhere: MiniCPM's remedy
    assert "[cuda-oom] by hand: restart the service with `inv serve ... --gpu-memory-utilization 0.7`" in \
        " ".join(p.stdout.split())


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
