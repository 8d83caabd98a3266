"""inv deepseek-config as a user runs it: option checking before anything is touched, the GPU it sizes for."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ocrdeploy.recipes import deepseek

ROOT = Path(__file__).parents[2]
SMI = ROOT / "tests" / "fixtures" / "nvidia-smi"
CONFIG = ("BASE_SIZE = 1024\nIMAGE_SIZE = 640\nCROP_MODE = True\nMIN_CROPS= 2\nMAX_CROPS= 6 # max:9\n"
          "MAX_CONCURRENCY = 100\nNUM_WORKERS = 64\nPRINT_NUM_VIS_TOKENS = False\nSKIP_REPEAT = True\n"
          "MODEL_PATH = 'deepseek-ai/DeepSeek-OCR'\nINPUT_PATH = ''\nOUTPUT_PATH = ''\n"
          "PROMPT = '<image>\\n<|grounding|>Convert the document to markdown.'\n")


@pytest.fixture
def host(tmp_path):
    wd = tmp_path / "wd"
    cfg = wd / "DeepSeek-OCR" / deepseek.VLLM_DIR / "config.py"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(CONFIG)
    (wd / "models" / "DeepSeek-OCR").mkdir(parents=True)
    (wd / ".ocrdeploy").mkdir()
    (wd / ".ocrdeploy" / "state.json").write_text(json.dumps(
        {"models": {"DeepSeek-OCR": {"path": str(wd / "models" / "DeepSeek-OCR")}}}))
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd)}}}))

    def run(*args, box=SMI / "3gpu-busy0", task="deepseek-config"):
        env = dict(os.environ, PATH=f"{box}:{os.environ['PATH']}", OCRDEPLOY_PROBE_NO_NVML="1", COLUMNS="200")
        env.pop("OCRDEPLOY_INVENTORY", None)
        return subprocess.run([sys.executable, "-m", "ocrdeploy", task, "--inventory", str(inv), *args],
                              capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    return cfg, run


@pytest.mark.parametrize("args,line", [
    (["--max-concurrency", "abc"], "--max-concurrency abc: a whole number"),
    (["--max-concurrency", "0"], "--max-concurrency 0: at least 1"),
    (["--max-crops", "-3"], "--max-crops -3: 2-9"),
    (["--max-crops", "12"], "--max-crops 12: 2-9"),
    (["--mode", "huge"], "--mode huge: choose tiny, small, base, large, gundam"),
    (["--gpu", "one"], "--gpu one: one GPU index"),
])
def test_bad_options_are_one_line_and_touch_nothing(host, args, line):
    cfg, run = host
    p = run(*args)
    assert p.returncode == 2 and line in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "Traceback" not in p.stderr and cfg.read_text() == CONFIG


# str.isdigit() holds for '²' (and isdecimal for '٣'): every --gpu parser takes ASCII digits only (red team M15)
@pytest.mark.parametrize("gpu", ["²", "٣", "1²", "-1", "0x1"])
@pytest.mark.parametrize("task,more", [("deepseek-config", ["--check"]), ("deepseek-run", ["--input", "/x.pdf"]),
                                       ("deepseek-verify", []), ("serve", [])])
def test_every_gpu_option_takes_ascii_indexes_only(host, task, more, gpu):
    cfg, run = host
    p = run(*more, "--gpu", gpu, task=task)
    assert p.returncode == 2 and "--gpu" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "Traceback" not in p.stderr and cfg.read_text() == CONFIG


def test_sized_for_the_free_gpu_and_recorded_for_the_runs(host):
    cfg, run = host
    p = run()                                   # 3x RTX 5090, GPU 0 busy: GPU 1 is the free one
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Gundam mode for a 32 GB card (GPU 1, NVIDIA GeForce RTX 5090, 32607 MiB)" in p.stdout
    v = deepseek.read_config(cfg.read_text())
    assert v["OCRDEPLOY_GPU"] == "1" and v["MAX_CONCURRENCY"] == 50
    assert v["PRINT_NUM_VIS_TOKENS"] is False           # the user's value is kept
    p = run("--gpu", "2", "--max-concurrency", "40", "--max-crops", "9")
    assert p.returncode == 0, p.stdout + p.stderr
    v = deepseek.read_config(cfg.read_text())
    assert (v["OCRDEPLOY_GPU"], v["MAX_CONCURRENCY"], v["MAX_CROPS"]) == ("2", 40, 9)
    p = run("--gpu", "7")
    assert p.returncode == 1 and "no GPU 7 on this host (GPUs: 0, 1, 2)" in p.stdout


def test_a_16_gb_card_gets_base(host, tmp_path):
    cfg, run = host
    box = tmp_path / "box"
    box.mkdir()
    row = [line for line in (SMI / "cards.csv").read_text().splitlines() if ", 16376," in line][0]
    (box / "query-gpu.csv").write_text("# fields: index,name,uuid,memory.total,memory.used,memory.free,"
                                       "driver_version\n# the RTX 4080 SUPER row of ../cards.csv\n" + row + "\n")
    (box / "compute-apps.csv").write_text("# fields: gpu_uuid,pid,process_name,used_memory\n")
    (box / "nvidia-smi.txt").write_text("")
    (box / "nvidia-smi").write_text(f'#!/bin/sh\nexec sh {SMI / "fake-nvidia-smi.sh"} {box} "$@"\n')
    (box / "nvidia-smi").chmod(0o755)
    p = run(box=box)
    assert p.returncode == 0, p.stdout + p.stderr
    v = deepseek.read_config(cfg.read_text())
    assert (v["BASE_SIZE"], v["IMAGE_SIZE"], v["CROP_MODE"], v["MAX_CONCURRENCY"]) == (1024, 1024, False, 30)


# Issue 20 item 12 (audit D13): the notes' six prompts by name, and a prompt set by hand survives a re-run.
def test_a_hand_set_prompt_stays_and_the_notes_six_are_offered(host):
    cfg, run = host
    cfg.write_text(CONFIG.replace("PROMPT = '<image>\\n<|grounding|>Convert the document to markdown.'",
                                  "PROMPT = '<image>\\nParse the figure.'  # set by hand"))
    p = run()
    assert p.returncode == 0, p.stdout + p.stderr
    assert deepseek.read_config(cfg.read_text())["PROMPT"] == "<image>\nParse the figure."
    assert "# set by hand" in cfg.read_text() and "PROMPT kept as config.py has it" in p.stdout
    for name, prompt in [("grounding", "<image>\n<|grounding|>Convert the document to markdown."),
                         ("free", "<image>\nFree OCR."), ("ocr-image", "<image>\n<|grounding|>OCR this image."),
                         ("figure", "<image>\nParse the figure."), ("describe", "<image>\nDescribe this image in detail."),
                         ("locate:the total", "<image>\nLocate <|ref|>the total<|/ref|> in the image.")]:
        p = run("--prompt", name)
        assert p.returncode == 0, p.stdout + p.stderr
        assert deepseek.read_config(cfg.read_text())["PROMPT"] == prompt
    cfg.write_text("\n".join(line for line in CONFIG.splitlines() if not line.startswith("PROMPT")) + "\n")
    assert run().returncode == 0                                       # no PROMPT at all: the grounding one
    assert deepseek.read_config(cfg.read_text())["PROMPT"] == deepseek.GROUNDING


@pytest.mark.parametrize("prompt", ["ocr", "locate", "locate:", "locate:a<|b", "free:x"])
def test_an_unknown_prompt_names_the_six(host, prompt):
    cfg, run = host
    p = run("--prompt", prompt)
    assert p.returncode == 2 and f"--prompt {prompt}:" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert cfg.read_text() == CONFIG


@pytest.mark.parametrize("kwargs,says", [({"input_path": "rel/in"}, "--input rel/in: a path on the host"),
                                         ({"output_path": "~/out"}, "--output ~/out: a path on the host")])
def test_a_relative_input_or_output_is_refused_before_any_host_naming_the_option(kwargs, says):
    """It was found only once the host's config.py was read, as 'rel/in: MODEL_PATH, INPUT_PATH and
    OUTPUT_PATH must be absolute paths' (no option named), and not at all where config.py was missing."""
    from ocrdeploy.commands.deepseek_config import run_deepseek_config
    from ocrdeploy.errors import UsageError

    args = dict(host="nosuchhost.invalid", inventory=None, mode=None, max_crops=None, max_concurrency=None,
                input_path=None, output_path=None, prompt=None, downgrade=False, single_image=False, check=True,
                as_json=False, accept_new_host_keys=False, connect_timeout=None)
    with pytest.raises(UsageError) as exc:
        run_deepseek_config(**{**args, **kwargs})
    assert str(exc.value).startswith(says)
