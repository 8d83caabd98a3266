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


# Issue 20 item 3 (audit D17): DeepSeek-OCR's transformers inference (notes 4.1; the repository's
# DeepSeek-OCR-hf/run_dpsk_ocr.py at e4ac34e).  What test_compress prints, as a DeepSeek-OCR user recorded it on a T4
# (modeling_deepseekocr.py's infer(): image size, valid image tokens, output texts tokens, compression ratio):
RECORDED_T4 = ("=====================\nBASE:  torch.Size([1, 256, 1280])\nPATCHES:  torch.Size([2, 100, 1280])\n"
               "=====================\n# Pineda\n\nimage size:  (1168, 1811)\nvalid image tokens:  165\n"
               "output texts tokens (valid):  387\ncompression ratio:  2.35\n")
GUNDAM = {"BASE_SIZE": 1024, "IMAGE_SIZE": 640, "CROP_MODE": True, "MAX_CROPS": 6, "MODEL_PATH": "/m/DeepSeek-OCR",
          "PROMPT": "<image>\n<|grounding|>Convert the document to markdown."}


def test_the_transformers_job_is_the_notes_call_with_config_pys_mode():
    from ocrdeploy.recipes import deepseek

    job = deepseek.tf_job(GUNDAM, "/in/a.png", "/out/a.png")
    assert (job["attn"], job["device"], job["model"], job["prompt"]) == (
        "flash_attention_2", "cuda", "/m/DeepSeek-OCR", GUNDAM["PROMPT"])
    assert (job["base_size"], job["image_size"], job["crop_mode"]) == (1024, 640, True)
    tiny = deepseek.tf_job({**GUNDAM, "BASE_SIZE": 512, "IMAGE_SIZE": 512, "CROP_MODE": False}, "/i", "/o")
    assert (tiny["base_size"], tiny["image_size"], tiny["crop_mode"]) == (512, 512, False)
    runner = Path(deepseek.__file__).with_name("deepseek_tf.py").read_text()
    for part in ("_attn_implementation=", "trust_remote_code=True, use_safetensors=True", ".eval()", ".cuda()",
                 "torch.bfloat16", "save_results=True, test_compress=True"):
        assert part in runner


def test_the_recorded_t4_output_is_read_and_checked():
    from ocrdeploy.recipes import deepseek

    figures, checks = deepseek.tf_report(RECORDED_T4, [{"name": "/o/a.png/result.mmd", "size": 2048}], GUNDAM)
    assert figures == {"vision_tokens": 165, "text_tokens": 387, "compression_ratio": 2.35}
    assert all(c["ok"] for c in checks) and "165 of at most 856 (gundam mode)" in checks[-1]["detail"]
    _, checks = deepseek.tf_report("no figures here\n", [{"name": "/o/a.png/result.mmd", "size": 0}], GUNDAM)
    assert [c["ok"] for c in checks] == [False, False]
    tiny = {**GUNDAM, "BASE_SIZE": 512, "IMAGE_SIZE": 512, "CROP_MODE": False}    # Tiny: 64 tokens at most
    _, checks = deepseek.tf_report(RECORDED_T4, [{"name": "/o/result.mmd", "size": 9}], tiny)
    assert checks[-1]["ok"] is False and "165 of at most 64 (tiny mode)" in checks[-1]["detail"]


TINY_OCR = r'''
"""A tiny model with DeepSeek-OCR's entry points: AutoModel via trust_remote_code, infer() with its signature."""
import os

from transformers import LlamaForCausalLM


class TinyOCR(LlamaForCausalLM):
    def infer(self, tokenizer, prompt="", image_file="", output_path=" ", base_size=1024, image_size=640,
              crop_mode=True, test_compress=False, save_results=False, eval_mode=False):
        with open(image_file, "rb") as fh:
            fh.read()
        ids = tokenizer(prompt.replace("<image>", ""), return_tensors="pt").input_ids.to(self.device)
        out = self.generate(ids, max_new_tokens=6, do_sample=False)
        text = tokenizer.decode(out[0][ids.shape[1]:], skip_special_tokens=True)
        vision = (base_size // 64) ** 2 + (2 * (image_size // 64) ** 2 if crop_mode else 0)
        if test_compress:
            print("image size: ", (64, 64))
            print("valid image tokens: ", vision)
            print("output texts tokens (valid): ", len(out[0]) - ids.shape[1])
            print("compression ratio: ", round((len(out[0]) - ids.shape[1]) / vision, 2))
        if save_results:
            os.makedirs(os.path.join(output_path, "images"), exist_ok=True)
            with open(os.path.join(output_path, "result.mmd"), "w") as fh:
                fh.write("# " + text + "\n")
        return text
'''


def test_the_runner_with_the_real_transformers_on_a_tiny_model(tmp_path):
    """recipes/deepseek_tf.py as the host runs it, in the real transformers engine venv, on the CPU (the one knob the
    command never turns: no GPU here), through AutoModel/AutoTokenizer with trust_remote_code and infer()."""
    from engines import engine_env
    from tinymodel import make_tiny_llama

    from ocrdeploy.recipes import deepseek

    env = engine_env("transformers")
    model = make_tiny_llama(tmp_path / "DeepSeek-OCR")
    cfg = json.loads((model / "config.json").read_text())
    cfg["auto_map"] = {"AutoModel": "modeling_tinyocr.TinyOCR"}
    (model / "config.json").write_text(json.dumps(cfg))
    (model / "modeling_tinyocr.py").write_text(TINY_OCR)
    image = tmp_path / "page.png"
    image.write_bytes(samples.png())
    values = {**GUNDAM, "MODEL_PATH": str(model)}
    job = dict(deepseek.tf_job(values, str(image), str(tmp_path / "out" / "page.png")), attn="sdpa", device="cpu")
    runner = Path(deepseek.__file__).with_name("deepseek_tf.py")
    import subprocess

    p = subprocess.run([str(env / "bin" / "python"), str(runner), json.dumps(job)], capture_output=True, text=True,
                       timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": ""})
    assert p.returncode == 0, p.stderr[-3000:]
    mmd = tmp_path / "out" / "page.png" / "result.mmd"
    figures, checks = deepseek.tf_report(p.stdout, [{"name": str(mmd), "size": mmd.stat().st_size}], values)
    assert figures["vision_tokens"] == 256 + 2 * 100 and all(c["ok"] for c in checks), (p.stdout, checks)


def test_the_transformers_backend_refuses_what_it_cannot_take(site, tmp_path):
    wd, inv = site
    batch_site(wd)
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(samples.deepseek_document())
    p = cli("deepseek-run", ["--input", str(pdf), "--backend", "transformers", "--json"], inv)
    assert p.returncode == 1 and "--backend transformers takes an image" in host_doc(p)["error"]
    p = cli("deepseek-run", ["--input", str(pdf), "--backend", "tensorrt"], inv)
    assert p.returncode == 2 and "--backend tensorrt: vllm" in p.stderr and "Traceback" not in p.stderr
    p = cli("deepseek-run", ["--input", str(tmp_path), "--backend", "transformers", "--eval"], inv)
    assert p.returncode == 2 and "--eval" in p.stderr
