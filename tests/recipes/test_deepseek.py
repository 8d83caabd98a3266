"""DeepSeek-OCR: config.py by VRAM on recorded cards, the OOM downgrades, the Dockerfile, the flash-attn pair,
the upstream serving flags, and deepseek-config as a user runs it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ocrdeploy.errors import UsageError
from ocrdeploy.provision.facts import parse_query_gpu
from ocrdeploy.provision.step import NotYet, StepError
from ocrdeploy.recipes import deepseek
from ocrdeploy.commands.deepseek_config import card_gb, pick_card

ROOT = Path(__file__).parents[2]
CARDS = [line for line in (ROOT / "tests" / "fixtures" / "nvidia-smi" / "cards.csv").read_text().splitlines()
         if not line.startswith("#")]
SEED_CONFIG = '''# Tiny: base_size 512, image_size 512, crop_mode False
# Gundam: base_size 1024, image_size 640, crop_mode True
BASE_SIZE = 1024
IMAGE_SIZE = 640
CROP_MODE = True
MIN_CROPS = 2
MAX_CROPS = 6 # max:9; If your GPU memory is small, it is recommended to set it to 6.
MAX_CONCURRENCY = 100 # If you have limited GPU memory, lower the concurrency count.
NUM_WORKERS = 64 # image pre-process (resize/padding) workers
PRINT_NUM_VIS_TOKENS = False
SKIP_REPEAT = True
MODEL_PATH = 'deepseek-ai/DeepSeek-OCR' # change to your model path
INPUT_PATH = ''
OUTPUT_PATH = ''
PROMPT = '<image>\\n<|grounding|>Convert the document to markdown.'
'''


CARD_ROWS = {int(line.split(",")[3]): line for line in CARDS}


def facts_for(line):
    return {"gpu": {"gpus": parse_query_gpu(line)}}


# Every recorded card (tests/fixtures/nvidia-smi/cards.csv): the size it is sold as, its mode by seed 003 2.4
# (< 8 GB Tiny/Small, 8-16 GB Base, > 16 GB Large, Gundam from 32 GB), MAX_CROPS and MAX_CONCURRENCY (2.2).
@pytest.mark.parametrize("mib,gb,mode,conc", [
    (6144, 6, "small", 30), (8188, 8, "base", 30), (15360, 16, "base", 30), (16376, 16, "base", 30),
    (23028, 24, "large", 40), (24564, 24, "large", 40), (32607, 32, "gundam", 50), (40960, 40, "gundam", 100),
    (46068, 48, "gundam", 100), (81559, 80, "gundam", 100), (81920, 80, "gundam", 100)])
def test_config_by_card(mib, gb, mode, conc):
    card = pick_card(facts_for(CARD_ROWS[mib]))
    assert card_gb(card) == gb
    values, notes = deepseek.config_values(card_gb(card), 32, model_path="/m", input_path="/i", output_path="/o")
    base, image, crop = deepseek.MODES[mode]
    assert (values["BASE_SIZE"], values["IMAGE_SIZE"], values["CROP_MODE"]) == (base, image, crop)
    assert (values["MAX_CROPS"], values["MAX_CONCURRENCY"], values["NUM_WORKERS"]) == (6, conc, 32)
    assert values["PROMPT"] == "<image>\n<|grounding|>Convert the document to markdown."
    assert notes[0] == f"{mode.capitalize()} mode for a {gb} GB card"
    assert "PRINT_NUM_VIS_TOKENS" not in values          # the user's own setting stays


def test_config_limits_and_paths():
    v, notes = deepseek.config_values(40, 8, model_path="/m", input_path="/i", output_path="/o", max_crops=9)
    assert v["MAX_CROPS"] == 9 and len(notes) == 1
    v, notes = deepseek.config_values(23, 8, model_path="/m", input_path="/i", output_path="/o", max_crops=8)
    assert v["MAX_CROPS"] == 6 and "keep 6 under 24 GB" in notes[1]
    # "keep 6 under 24 GB": a 24 GB card (an A10 or a 4090) is not under it and keeps the crops asked for
    for mib in (23028, 24564):
        gb = card_gb(pick_card(facts_for(CARD_ROWS[mib])))
        v, notes = deepseek.config_values(gb, 8, model_path="/m", input_path="/i", output_path="/o", max_crops=9)
        assert v["MAX_CROPS"] == 9 and not [n for n in notes if "MAX_CROPS" in n], (mib, notes)
    v, notes = deepseek.config_values(24, 8, model_path="/m", input_path="/i", output_path="/o", mode="gundam")
    assert "Gundam is tight below 32 GB" in notes[-1]
    assert deepseek.config_values(5, 1, model_path="/m", input_path="/i", output_path="/o")[0]["BASE_SIZE"] == 512
    with pytest.raises(UsageError, match="absolute"):
        deepseek.config_values(40, 8, model_path="deepseek-ai/DeepSeek-OCR", input_path="/i", output_path="/o")


def test_the_chosen_card_is_the_free_one_or_the_one_asked_for():
    facts = {"gpu": {"gpus": parse_query_gpu("\n".join(CARD_ROWS[m].replace("0, ", f"{i}, ", 1)
                                                       for i, m in enumerate((81920, 16376, 24564))))}}
    facts["gpu"]["gpus"][0]["processes"] = [{"pid": 7}]
    assert pick_card(facts)["index"] == 2             # GPU 0 is busy; GPU 2 has the most free memory
    assert pick_card(facts, "1")["index"] == 1
    with pytest.raises(RuntimeError, match="no GPU 5 on this host"):
        pick_card(facts, "5")


def test_render_keeps_comments_and_reads_back():
    values, _ = deepseek.config_values(24, 16, model_path="/m/DeepSeek-OCR", input_path="/in", output_path="/out")
    text = deepseek.render_config(SEED_CONFIG, values)
    assert "MAX_CROPS = 6  # max:9; If your GPU memory is small" in text
    assert "# Gundam: base_size 1024, image_size 640, crop_mode True" in text
    back = deepseek.read_config(text)
    assert back == {**back, **values}
    assert back["PROMPT"] == "<image>\n<|grounding|>Convert the document to markdown."
    assert back["PRINT_NUM_VIS_TOKENS"] is False       # as the user's file had it


def cost(v):
    """What a batch's memory grows with: requests at once, vision tokens per image, the global view's side,
    the pixels the encoder takes per image (the global view plus every crop)."""
    crops = v["MAX_CROPS"] if v["CROP_MODE"] else 0
    return (v["MAX_CONCURRENCY"], deepseek.vision_tokens(v), v["BASE_SIZE"],
            v["BASE_SIZE"] ** 2 + crops * v["IMAGE_SIZE"] ** 2)


def downgrade_path(v, single_image=False):
    path = []
    for _ in range(12):      # there are at most 6 steps; more means a step went back up
        try:
            new, why = deepseek.downgrade(v, single_image=single_image)
        except UsageError:
            return path
        path.append((why, new))
        v = new
    raise AssertionError(f"no end to the downgrades: {[why for why, _ in path]}")


@pytest.mark.parametrize("mode", list(deepseek.MODES))
@pytest.mark.parametrize("conc", [100, 30])
def test_every_downgrade_path_only_lowers_memory(mode, conc):
    b, i, c = deepseek.MODES[mode]
    start = {**deepseek.read_config(SEED_CONFIG), "BASE_SIZE": b, "IMAGE_SIZE": i, "CROP_MODE": c,
             "MAX_CONCURRENCY": conc}
    for single in (False, True):
        v = start
        path = downgrade_path(v, single)
        assert path or (single and b <= 640) or (mode == "tiny" and conc == 30)
        for why, new in path:
            before, after = cost(v), cost(new)
            assert all(a <= x for a, x in zip(after, before)) and after != before, (mode, why, before, after)
            v = new


def test_downgrade_orders():
    v = deepseek.read_config(SEED_CONFIG)                        # Gundam, MAX_CONCURRENCY 100, MAX_CROPS 6
    assert [why for why, _ in downgrade_path(v)] == [
        "MAX_CONCURRENCY 100 -> 30 (halved, to 30)", "MAX_CROPS 4",
        "Base mode (BASE_SIZE 1024, IMAGE_SIZE 1024, CROP_MODE False)",
        "Small mode (BASE_SIZE 640, IMAGE_SIZE 640, CROP_MODE False)",
        "Tiny mode (BASE_SIZE 512, IMAGE_SIZE 512, CROP_MODE False)"]
    tiny = {**v, "BASE_SIZE": 512, "IMAGE_SIZE": 512, "CROP_MODE": False}
    assert [why for why, _ in downgrade_path(tiny)] == ["MAX_CONCURRENCY 100 -> 30 (halved, to 30)"]
    small = {**v, "BASE_SIZE": 640, "IMAGE_SIZE": 640, "CROP_MODE": False, "MAX_CONCURRENCY": 30}
    assert downgrade_path(small)[0][1]["BASE_SIZE"] == 512            # Small goes to Tiny, never to Base 1024
    large = {**v, "BASE_SIZE": 1280, "IMAGE_SIZE": 1280, "CROP_MODE": False, "MAX_CONCURRENCY": 30}
    assert downgrade_path(large)[0][0].startswith("Base mode")         # no MAX_CROPS step without crops
    assert deepseek.downgrade(v, single_image=True)[0]["BASE_SIZE"] == 640
    assert deepseek.downgrade(large, single_image=True)[0] == {**large, "BASE_SIZE": 640, "IMAGE_SIZE": 640}


def test_dockerfile_pins():
    text = deepseek.dockerfile()
    assert "FROM ${BASE_IMAGE}" in text and "ARG BASE_IMAGE=nvidia/cuda:11.8.0-devel-ubuntu22.04" in text
    assert "ENV PYTHON_VERSION=3.12.9" in text and "./configure --enable-optimizations --enable-shared" in text
    assert ("RUN pip install torch==2.6.0 torchvision==0.21.0 torchaudio==2.6.0 --index-url "
            "https://download.pytorch.org/whl/cu118") in text
    assert "RUN pip install vllm-0.8.5+cu118-cp38-abi3-manylinux1_x86_64.whl" in text
    assert "RUN pip install flash-attn==2.7.3 --no-build-isolation" in text
    assert "SimHei.ttf /usr/share/fonts/" in text and "ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH" in text


def test_flash_attn_pair_is_checked_before_building():
    step = deepseek.FlashAttn("ds-flash-attn", deepseek.ENV)
    tools = {name: {"version": "1"} for name in ("wheel", "ninja", "packaging", "setuptools")}
    facts = {"workdir": {"path": "/w"},
             "venvs": {deepseek.ENV: {"dists": {"torch": {"version": "2.5.1+cu118"}, **tools}}}}
    with pytest.raises(StepError, match="torch 2.6.0 \\+ flash-attn 2.7.3.*undefined symbol"):
        step.commands(facts, {})
    facts["venvs"][deepseek.ENV]["dists"]["torch"]["version"] = "2.6.0+cu118"
    (cmd,) = step.commands(facts, {})
    assert list(cmd.argv[-2:]) == ["flash-attn==2.7.3", "--no-build-isolation"]
    del facts["venvs"][deepseek.ENV]["dists"]["wheel"]       # flash-attention#1761: setup.py imports wheel
    with pytest.raises(NotYet, match="wheel not in deepseek-ocr-env yet"):
        step.commands(facts, {})


def test_flash_attn_build_tools_come_first():
    steps = {s.name: s for s in deepseek.vllm085_steps({})}
    tools = steps["ds-build-tools"]
    assert tools.venv_name == deepseek.ENV and steps["ds-flash-attn"].after == ("ds-build-tools",)
    assert {"wheel", "ninja", "packaging"} <= set(tools.raw)
    text = deepseek.dockerfile()
    assert text.index("RUN pip install wheel ninja packaging") < text.index("RUN pip install flash-attn==2.7.3")


def test_upstream_server_flags():
    argv = deepseek.vllm_server("/e/bin/python", "/m/DeepSeek-OCR", 8000, "127.0.0.1")
    text = " ".join(argv)
    assert "--trust-remote-code --dtype bfloat16 --max-model-len 8192 --gpu-memory-utilization 0.9" in text
    assert "--logits-processors vllm.model_executor.models.deepseek_ocr:NGramPerReqLogitsProcessor" in text
    assert "--no-enable-prefix-caching --mm-processor-cache-gb 0" in text
    assert "--served-model-name deepseek-ai/DeepSeek-OCR" in text and "--port 8000" in text


def test_deepseek_config_command(tmp_path):
    wd = tmp_path / "wd"
    cfg = wd / "DeepSeek-OCR" / "DeepSeek-OCR-master" / "DeepSeek-OCR-vllm" / "config.py"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(SEED_CONFIG)
    model = wd / "models" / "DeepSeek-OCR"
    model.mkdir(parents=True)
    (wd / ".ocrdeploy").mkdir()
    (wd / ".ocrdeploy" / "state.json").write_text(json.dumps({"models": {"DeepSeek-OCR": {"path": str(model)}}}))
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd)}}}))
    env = dict(os.environ, PATH=f"{ROOT}/tests/fixtures/nvidia-smi/a100-535:{os.environ['PATH']}",
               OCRDEPLOY_PROBE_NO_NVML="1")
    env.pop("OCRDEPLOY_INVENTORY", None)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "ocrdeploy", "deepseek-config", "--inventory", str(inv), *args],
                              capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)

    p = run()
    assert p.returncode == 0, p.stdout + p.stderr
    v = deepseek.read_config(cfg.read_text())
    assert (v["CROP_MODE"], v["MAX_CONCURRENCY"], v["MODEL_PATH"]) == (True, 100, str(model))
    assert v["INPUT_PATH"] == f"{wd}/deepseek-input" and (cfg.parent / "config.py.orig").read_text() == SEED_CONFIG
    p = run("--downgrade")
    assert p.returncode == 0 and "MAX_CONCURRENCY 100 -> 30" in p.stdout
    assert deepseek.read_config(cfg.read_text())["MAX_CONCURRENCY"] == 30
    p = run("--mode", "base", "--check")
    assert "BASE_SIZE = 1024" in p.stdout and "IMAGE_SIZE = 1024" in p.stdout and "not written" in p.stdout
    assert deepseek.read_config(cfg.read_text())["IMAGE_SIZE"] == 640


# Red team M26: the canaries an inventory can plant in a mirror URL made of URL characters only (RFC 3986 allows
# $ ( ) ; ' in a URL), each line run the way docker build and a user pasting BUILD.md would run it: through sh -c.
CANARY_VARS = {
    "torch_index_url": "https://t.example/whl;touch$IFS./CANARY_TORCH;",
    "pip_extra_index_url": "https://e.example/simple'$(touch$IFS./CANARY_EXTRA)'",
    "pip_trusted_host": "e.example",
}


def _shell_lines(text, prefix):
    """The Dockerfile's RUN lines (continuations joined, BuildKit's --mount flags dropped) or BUILD.md's export
    lines, as sh would get them."""
    import re

    if prefix == "export ":
        return re.findall(r"export (\S+=.*?) \(with the real credentials\)", text)
    joined = text.replace("\\\n", "")
    return [re.sub(r"^(--mount=\S+ )+", "", line[len(prefix):]) for line in joined.splitlines()
            if line.startswith(prefix)]


def _run_as_docker_would(lines, tmp_path, env=None):
    stub = tmp_path / "bin"
    stub.mkdir(exist_ok=True)
    (stub / "pip").write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done >> "$PIP_ARGV"\n')
    (stub / "pip").chmod(0o755)
    argv = tmp_path / "pip-argv"
    for line in lines:
        subprocess.run(["sh", "-c", line], cwd=tmp_path, timeout=10, capture_output=True,
                       env={"PATH": f"{stub}:/usr/bin:/bin", "PIP_ARGV": str(argv), **(env or {})})
    return argv.read_text().splitlines() if argv.exists() else []


@pytest.mark.parametrize("creds", [False, True])
def test_mirror_urls_reach_the_shell_as_one_word_and_no_canary_runs(tmp_path, creds):
    pip = dict(CANARY_VARS)
    if creds:        # with credentials the URLs go to BuildKit secrets and BUILD.md's export lines instead
        pip["torch_index_url"] = "https://u:p@t.example/whl;touch$IFS./CANARY_TORCH;"
        pip["pip_index_url"] = "https://u:p@m.example/simple'$(touch$IFS./CANARY_INDEX)'"
    files = deepseek.write_docker_context(tmp_path / "ctx", pip=pip)
    text, build = (Path(f).read_text() for f in files)
    runs = _shell_lines(text, "RUN ")
    exports = _shell_lines(build, "export ")
    secrets = {"TORCH_INDEX_URL": pip["torch_index_url"], "PIP_INDEX_URL": pip.get("pip_index_url", "")}
    argv = _run_as_docker_would([r for r in runs if "pip" in r], tmp_path, secrets)
    names = [e.split("=", 1)[0] for e in exports]
    shown = _run_as_docker_would([f'export {e}; pip "${n}"' for e, n in zip(exports, names)], tmp_path / "ctx")
    assert not list(tmp_path.rglob("CANARY*")), "a canary ran"
    assert pip["torch_index_url"] in argv                       # one word, as the inventory wrote it
    if creds:
        assert exports and "https://***@m.example/simple'$(touch$IFS./CANARY_INDEX)'" in shown
        assert "https://***@t.example/whl;touch$IFS./CANARY_TORCH;" in shown
    else:
        assert "global.extra-index-url" in argv and pip["pip_extra_index_url"] in argv


def test_a_plain_index_url_with_dollar_is_kept_literal_in_the_arg_line(tmp_path):
    import shlex

    url = "https://m.example/simple$(touch$IFS./CANARY)$HOME'x'"
    text = deepseek.dockerfile(pip={"pip_index_url": url})
    (line,) = [x for x in text.splitlines() if x.startswith("ARG PIP_INDEX_URL=")]
    # Docker's ARG word reads double quotes and \$ as POSIX sh does (buildkit's shell lexer): one word, literal
    word = line[len("ARG PIP_INDEX_URL="):]
    assert shlex.split(word) == [word[1:-1]] and word.startswith('"')           # one word
    said = subprocess.run(["sh", "-c", "printf %s " + word], capture_output=True, text=True, timeout=10, cwd=tmp_path)
    assert said.stdout == url and not list(tmp_path.iterdir()), said
    assert "ARG PIP_INDEX_URL=https://pypi.tuna.tsinghua.edu.cn/simple\n" in deepseek.dockerfile(
        pip={"pip_index_url": "https://pypi.tuna.tsinghua.edu.cn/simple"})


@pytest.mark.parametrize("var,url", [("torch_index_url", "https://t.example/`touch CANARY`"),
                                     ("torch_index_url", "https://t.example/whl;touch${IFS}/tmp/x/CANARY_DOCKER5;"),
                                     ("pip_index_url", "https://u:p@m.example/simple'$(touch /tmp/CANARY)'"),
                                     ("pip_extra_index_url", 'https://e.example/"x"'),
                                     ("pip_index_url", "https://m.example/a\\b")])
def test_a_mirror_url_with_no_url_characters_is_refused_by_name(tmp_path, var, url):
    with pytest.raises(UsageError, match=f"inventory var {var}: .* which no URL holds"):
        deepseek.write_docker_context(tmp_path / "ctx", pip={var: url})
    assert not (tmp_path / "ctx" / "Dockerfile").exists()


# Issue 20 item 10 (audit D6): the notes' flash-attn build can take 8 GB+ and be killed; its MAX_JOBS is sized to
# the host's memory at flash-attention's own 9 GiB a job (and half the cores), and halved once after a kill.
@pytest.mark.parametrize("cpus,avail_gib,jobs", [(16, 30, 3), (96, 147, 16), (8, 200, 4), (4, 6, 1)])
def test_flash_attn_build_jobs_are_sized_to_memory(cpus, avail_gib, jobs):
    step = deepseek.FlashAttn("ds-flash-attn", deepseek.ENV)
    tools = {name: {"version": "1"} for name in ("wheel", "ninja", "packaging", "setuptools")}
    facts = {"workdir": {"path": "/w"}, "cpu": {"count": cpus}, "memory": {"available": avail_gib * 2 ** 30},
             "venvs": {deepseek.ENV: {"dists": {"torch": {"version": "2.6.0+cu118"}, **tools}}}}
    (cmd,) = step.commands(facts, {})
    assert cmd.env["MAX_JOBS"] == str(jobs) and list(cmd.argv[-2:]) == ["flash-attn==2.7.3", "--no-build-isolation"]
    assert f"MAX_JOBS={jobs} " in str(cmd)                      # what --check shows
    (again,) = step.retry(1, ["flash-attn-build-oom"], facts, {})
    assert again.env["MAX_JOBS"] == str(max(1, jobs // 2)) and again.argv == cmd.argv
    assert step.retry(2, ["flash-attn-build-oom"], facts, {}) is None and step.retry(1, ["cuda-oom"], facts, {}) is None


# Issue 20 item 11 (audit D8): the notes build the env on Python 3.12.9; a host's other 3.12 (3.12.1 on the audit's
# box) is not taken, uv's managed 3.12.9 is, and the host's own 3.12.9 where it has one.
def _python_steps(pythons):
    steps = {s.name: s for s in deepseek.vllm085_steps({})}
    facts = {"workdir": {"path": "/w"}, "pythons": pythons, "venvs": {}, "files": {}}
    return steps["python312"], steps["ds-venv"], facts


def test_the_deepseek_env_is_made_with_python_3_12_9():
    managed, venv, facts = _python_steps([{"path": "/usr/bin/python3.12", "version": "3.12.1"}])
    assert managed.needs(facts, {}).needed
    (cmd,) = managed.commands(facts, {})
    assert list(cmd.argv[-3:]) == ["python", "install", "3.12.9"]
    with pytest.raises(NotYet, match="no Python 3.12.9 on the host .found: 3.12.1"):
        venv.commands(facts, {})
    uv312 = "/home/u/.local/share/uv/python/cpython-3.12.9-linux-x86_64-gnu/bin/python3.12"
    managed, venv, facts = _python_steps([{"path": "/usr/bin/python3.12", "version": "3.12.1"},
                                          {"path": uv312, "version": "3.12.9"}])
    assert not managed.needs(facts, {}).needed
    assert venv.commands(facts, {})[0].argv[:3] == (uv312, "-m", "venv")
    facts["venvs"] = {deepseek.ENV: {"python": "3.12.1", "dists": {}}}       # an env an older run made with 3.12.1
    assert "has Python 3.12.1, want Python 3.12.9: recreate" in venv.needs(facts, {}).reason
    from ocrdeploy.checks.preflight import check_pythons
    from ocrdeploy.recipes import get_recipe

    said = {r.name: r for r in check_pythons({"pythons": [{"path": "/usr/bin/python3.12", "version": "3.12.1"}]},
                                             get_recipe("deepseek-ocr-vllm085").requirements)}
    r = said["python:deepseek-ocr-env"]
    assert r.status == "warn" and "no Python 3.12.9 on the host (found: 3.12.1)" in r.message
    assert "managed CPython 3.12.9 with uv" in r.message


# Mutation sample 52: the requirements step decides from the checkout's requirements.txt as pip reads it (comments
# and option lines skipped, every requirement checked against the env), never "all 0 requirements met".
DS_REQUIREMENTS = """# DeepSeek-OCR's requirements.txt
--extra-index-url https://download.pytorch.org/whl/cu118
transformers==4.46.3
tokenizers==0.20.3
PyMuPDF
img2pdf
einops
easydict
addict   # config
Pillow
numpy
"""


def test_the_requirements_step_reads_each_line_of_the_checkout_file():
    step = deepseek.RequirementsFile("ds-requirements", deepseek.ENV, f"{deepseek.REPO_DIR}/requirements.txt")
    names = ["transformers", "tokenizers", "pymupdf", "img2pdf", "einops", "easydict", "addict", "pillow", "numpy"]
    dists = {n: {"version": "1.0"} for n in names}
    dists.update(transformers={"version": "4.46.3"}, tokenizers={"version": "0.20.3"})
    facts = {"workdir": {"path": "/w"}, "reads": {step.path: DS_REQUIREMENTS},
             "venvs": {deepseek.ENV: {"dists": dists}}}
    assert [str(r) for r in step.parsed(facts)][:2] == ["transformers==4.46.3", "tokenizers==0.20.3"]
    assert len(step.parsed(facts)) == 9 and "addict" in [r.name for r in step.parsed(facts)]
    d = step.needs(facts, {})
    assert not d.needed and d.reason == "all 9 requirements of requirements.txt met"
    dists["transformers"] = {"version": "4.51.0"}
    del dists["addict"]
    d = step.needs(facts, {})
    assert d.needed and "transformers 4.51.0 installed, want ==4.46.3" in d.reason and "addict not installed" in d.reason
    (cmd,) = step.commands(facts, {})
    assert list(cmd.argv[-2:]) == ["-r", "/w/DeepSeek-OCR/requirements.txt"]


def test_upstream_server_flag_values_are_exact_words():
    argv = deepseek.vllm_server("/e/bin/python", "/m/DeepSeek-OCR", 8000, "127.0.0.1")
    pairs = {argv[i]: argv[i + 1] for i in range(3, len(argv) - 1) if argv[i].startswith("--")
             and not argv[i + 1].startswith("--")}
    assert pairs["--gpu-memory-utilization"] == "0.9" and pairs["--max-model-len"] == "8192"
    assert pairs["--dtype"] == "bfloat16" and pairs["--mm-processor-cache-gb"] == "0"
    assert pairs["--host"] == "127.0.0.1" and pairs["--port"] == "8000" and pairs["--model"] == "/m/DeepSeek-OCR"


def test_the_modes_are_the_guides_sizes():
    # seed 003 2.4 (DeepSeek-OCR's README): only Gundam crops; the vision tokens the model prints for each
    assert deepseek.MODES == {"tiny": (512, 512, False), "small": (640, 640, False), "base": (1024, 1024, False),
                              "large": (1280, 1280, False), "gundam": (1024, 640, True)}
    v, _ = deepseek.config_values(24, 8, mode="large", model_path="/m", input_path="/i", output_path="/o")
    assert (v["BASE_SIZE"], v["IMAGE_SIZE"], v["CROP_MODE"]) == (1280, 1280, False)
    assert deepseek.vision_tokens(v) == 400
    v, _ = deepseek.config_values(40, 8, mode="gundam", model_path="/m", input_path="/i", output_path="/o")
    assert deepseek.vision_tokens(v) == 256 + 6 * 100


def test_config_limits_at_their_edges():
    kw = dict(model_path="/m", input_path="/i", output_path="/o")
    v, notes = deepseek.config_values(16, 8, max_crops=7, **kw)          # 7 is over 6: lowered under 24 GB
    assert v["MAX_CROPS"] == 6 and "MAX_CROPS 7 lowered to 6" in notes[1]
    assert deepseek.config_values(16, 8, max_crops=6, **kw)[1] == ["Base mode for a 16 GB card"]
    assert deepseek.config_values(80, 128, **kw)[0]["NUM_WORKERS"] == 64     # the seed's 64 is the most
    assert deepseek.config_values(80, 65, **kw)[0]["NUM_WORKERS"] == 64
    assert deepseek.config_values(80, 0, **kw)[0]["NUM_WORKERS"] == 1


def test_downgrade_edges():
    v = deepseek.read_config(SEED_CONFIG)
    new, why = deepseek.downgrade({**v, "MAX_CONCURRENCY": 31})
    assert new["MAX_CONCURRENCY"] == 30 and why == "MAX_CONCURRENCY 31 -> 30 (halved, to 30)"
    new, why = deepseek.downgrade({**v, "MAX_CONCURRENCY": 30})
    assert new["MAX_CONCURRENCY"] == 30 and why == "MAX_CROPS 4"
    # one image alone: BASE_SIZE to 640, and a no-crop IMAGE_SIZE already under 640 is never raised
    custom = {**v, "BASE_SIZE": 1024, "IMAGE_SIZE": 512, "CROP_MODE": False}
    new, _ = deepseek.downgrade(custom, single_image=True)
    assert (new["BASE_SIZE"], new["IMAGE_SIZE"]) == (640, 512)
    assert deepseek.downgrade({**custom, "BASE_SIZE": 641}, single_image=True)[0]["BASE_SIZE"] == 640
    with pytest.raises(UsageError, match="already 640 or less"):
        deepseek.downgrade({**custom, "BASE_SIZE": 640}, single_image=True)


def test_render_assigns_each_name_once():
    values, _ = deepseek.config_values(24, 16, model_path="/m/DeepSeek-OCR", input_path="/in", output_path="/out")
    text = deepseek.render_config(SEED_CONFIG, values)
    for name in values:
        assert sum(line.startswith(f"{name} =") for line in text.splitlines()) == 1, name
    assert "set by ocrdeploy" not in text                           # every name was there to replace
    text = deepseek.render_config(SEED_CONFIG.replace("SKIP_REPEAT = True\n", ""), values)
    assert text.endswith("\n# set by ocrdeploy deepseek-config\nSKIP_REPEAT = True\n")


def test_docker_context_rewritten_in_place(tmp_path):
    first = deepseek.write_docker_context(tmp_path / "out" / "ctx")       # --docker-dir's parents made too
    again = deepseek.write_docker_context(tmp_path / "out" / "ctx", index_url="https://pypi.tuna.tsinghua.edu.cn/simple")
    assert first == again
    assert "ARG PIP_INDEX_URL=https://pypi.tuna.tsinghua.edu.cn/simple\n" in Path(again[0]).read_text()


def test_tf_job_takes_config_prompt():
    values, _ = deepseek.config_values(40, 8, model_path="/m", input_path="/i", output_path="/o",
                                       prompt=deepseek.prompt_for("free"))
    assert deepseek.tf_job(values, "/i/a.png", "/o")["prompt"] == "<image>\nFree OCR."
    del values["PROMPT"]                                             # the file's own PROMPT kept: none read
    assert deepseek.tf_job(values, "/i/a.png", "/o")["prompt"] == deepseek.GROUNDING
