"""DeepSeek-OCR (seed 003, Chinese): its two stacks as step plans, its Dockerfile, and config.py by VRAM.

deepseek-ocr-vllm085 is the seed's stack: Python 3.12, torch 2.6.0 from the cu118 index, the
vllm 0.8.5+cu118 wheel, the repo's requirements, flash-attn 2.7.3 built without isolation.
deepseek-ocr runs on upstream vLLM, which supports the model natively since 0.11.1; its serving
flags come from vLLM's own recipe (docs.vllm.ai/projects/recipes/en/latest/DeepSeek/DeepSeek-OCR.html:
logits_processors=[NGramPerReqLogitsProcessor], enable_prefix_caching=False, mm_processor_cache_gb=0).
"""

from __future__ import annotations

import re
import shlex

from packaging.requirements import InvalidRequirement, Requirement

from ..checks.requirements import DEEPSEEK_PYTHON
from ..errors import UsageError
from ..provision.command import Command
from ..provision.kinds import (TOOLS_ENV, GitClone, ManagedPython, PipInstall, RecordedCheck, UvForPython, Venv,
                               satisfied, venv_python)
from ..provision.pip_index import check_url, index_urls, masked, own_index
from ..provision.plan import Plan
from ..provision.step import Decision, NotYet, Step, StepError, absolute, dist, wd

ENV, UPSTREAM_ENV = "deepseek-ocr-env", "deepseek-vllm-env"
TOOLS = TOOLS_ENV
CU118_INDEX = "https://download.pytorch.org/whl/cu118"
TORCH_PINS = ["torch==2.6.0", "torchvision==0.21.0", "torchaudio==2.6.0"]
VLLM_WHEEL = ("https://github.com/vllm-project/vllm/releases/download/v0.8.5/"
              "vllm-0.8.5+cu118-cp38-abi3-manylinux1_x86_64.whl")
REPO = "https://github.com/deepseek-ai/DeepSeek-OCR.git"
REPO_DIR = wd("DeepSeek-OCR")
VLLM_DIR = "DeepSeek-OCR-master/DeepSeek-OCR-vllm"
CONFIG = f"{REPO_DIR}/{VLLM_DIR}/config.py"      # what deepseek-config writes and the batch scripts import
# torch -> the flash-attn built against it; another pair fails at import with `undefined symbol` (seed 1.1)
FLASH_ATTN_FOR_TORCH = {"2.6.0": "2.7.3"}
# What `pip install flash-attn --no-build-isolation` takes from the env itself: its setup.py imports wheel
# and packaging and builds with ninja (and setuptools), none declared as build requirements and none in a
# bare Python 3.12 venv (flash-attention issue #1761: "ModuleNotFoundError: No module named 'wheel'").
FLASH_ATTN_BUILD = ["wheel", "ninja", "packaging", "setuptools"]
SERVED_NAME = "deepseek-ai/DeepSeek-OCR"   # the seed's Model ID: the client asks for exactly this
DEFAULT_PORT = 8000

VERIFY_085 = ("import torch\nprint('PyTorch:', torch.__version__, 'CUDA:', torch.version.cuda)\n"
              "assert torch.__version__.split('+')[0] == '2.6.0', torch.__version__\n"
              "assert torch.version.cuda == '11.8', torch.version.cuda\n"
              "print('GPU available:', torch.cuda.is_available(), 'GPUs:', torch.cuda.device_count())\n"
              "assert torch.cuda.is_available(), 'CUDA is not available'\n"
              "import flash_attn\nprint('flash_attn', flash_attn.__version__)\n"
              "from flash_attn import flash_attn_func\nprint('CUDA kernels available')")
VERIFY_UPSTREAM = ("import vllm\nfrom vllm.model_executor.models.deepseek_ocr import NGramPerReqLogitsProcessor\n"
                   "print('vLLM', vllm.__version__, 'with DeepSeek-OCR')")


class WheelInstall(PipInstall):
    """A pinned distribution installed from a wheel URL or file (the vllm 0.8.5+cu118 release wheel)."""

    def __init__(self, name, venv_name, requirement, wheel, after=()):
        super().__init__(name, venv_name, [requirement], after=after)
        self.raw = [wheel]


class RequirementsFile(PipInstall):
    """pip install -r <file>, decided from the file's own lines (read with the facts)."""

    def __init__(self, name, venv_name, path, after=()):
        super().__init__(name, venv_name, [], after=after)
        self.path = path

    def request(self, v):
        req = super().request(v)
        req.reads.add(self.path)
        return req

    def parsed(self, facts):
        text = (facts.get("reads") or {}).get(self.path)
        if text is None:
            return None
        reqs = []
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if not line or line.startswith("-"):
                continue
            try:
                reqs.append(Requirement(line))
            except InvalidRequirement:
                continue
        return reqs

    def needs(self, facts, v):
        reqs = self.parsed(facts)
        if reqs is None:
            return Decision(True, f"{self.path.rsplit('/', 1)[-1]} of the checkout not there yet")
        bad = [msg for ok, msg in (satisfied(dist(facts, self.venv_name, r.name), r) for r in reqs) if not ok]
        if bad:
            return Decision(True, "; ".join(bad))
        return Decision(False, f"all {len(reqs)} requirements of {self.path.rsplit('/', 1)[-1]} met")

    def commands(self, facts, v):
        if self.parsed(facts) is None:
            raise NotYet(f"{absolute(facts, self.path)} not there yet")
        return [self.pip_command(facts, v, "-r", absolute(facts, self.path))]


# One flash-attn compile job peaks at 8-9 GiB with its default NVCC_THREADS=4 (flash-attention's setup.py:
# "each JOB peak memory cost is ~8-9GB when threads = 4"); the notes: the build can take 8 GB+ and be killed.
FLASH_ATTN_JOB_GIB = 9.0


class FlashAttn(PipInstall):
    """flash-attn built against the torch of the env, checked as a pair before anything is built, with
    MAX_JOBS sized to the host's memory as the vLLM compile is (halved once when the build was killed)."""

    pip_only = "the flash-attn compile stays with pip (as the seed runs it; the diagnose table reads pip's build)"

    def __init__(self, name, venv_name, version="2.7.3", after=()):
        super().__init__(name, venv_name, [f"flash-attn=={version}"], after=after)
        self.version = version
        self.raw = [f"flash-attn=={version}", "--no-build-isolation"]

    @staticmethod
    def jobs_for(facts) -> int:
        from .cuda_steps import max_jobs

        return max_jobs((facts.get("cpu") or {}).get("count") or 1, (facts.get("memory") or {}).get("available"),
                        job_gib=FLASH_ATTN_JOB_GIB, cpu_share=1 / 2)

    def retry(self, attempt, findings, facts, v):
        """One more try with half the jobs when the compilers were killed for memory."""
        if attempt == 1 and {"flash-attn-build-oom", "compile-oom-killed"} & set(findings):
            return [self._with_jobs(cmd, max(1, self.jobs_for(facts) // 2)) for cmd in self.commands(facts, v)]
        return None

    @staticmethod
    def _with_jobs(cmd, jobs):
        return Command(cmd.argv, env={**cmd.env, "MAX_JOBS": str(jobs)}, cwd=cmd.cwd, sudo=cmd.sudo, stdin=cmd.stdin)

    def commands(self, facts, v):
        return [self._with_jobs(cmd, self.jobs_for(facts)) for cmd in self._build(facts, v)]

    def _build(self, facts, v):
        torch = dist(facts, self.venv_name, "torch")
        if torch is None:
            raise NotYet("torch is not installed yet: flash-attn is built against it")
        missing = [p for p in FLASH_ATTN_BUILD if dist(facts, self.venv_name, p) is None]
        if missing:
            raise NotYet(f"{', '.join(missing)} not in {self.venv_name} yet: --no-build-isolation builds with the "
                         f"env's own tools")
        base = torch["version"].split("+")[0]
        want = FLASH_ATTN_FOR_TORCH.get(base)
        if want != self.version:
            pairs = ", ".join(f"torch {t} + flash-attn {f}" for t, f in FLASH_ATTN_FOR_TORCH.items())
            raise StepError(f"refusing flash-attn {self.version} with torch {torch['version']}: the pair must be "
                            f"{pairs}, another one fails at import with `undefined symbol`")
        return super().commands(facts, v)


def vllm085_steps(v) -> list[Step]:
    wheel = v.get("vllm_wheel") or VLLM_WHEEL
    fa = str(v.get("flash_attn_version") or "2.7.3")
    venv = Venv("ds-venv", ENV, DEEPSEEK_PYTHON, after=("python312",))
    python = ManagedPython("python312", DEEPSEEK_PYTHON.managed, after=("tools-uv",), serves=venv)
    return [
        Venv("tools-venv", TOOLS, ">=3.10"),
        UvForPython("tools-uv", TOOLS, [python], after=("tools-venv",)),
        python,
        venv,
        PipInstall("ds-torch", ENV, TORCH_PINS, index_url=CU118_INDEX, index_var="torch_index_url",
                   after=("ds-venv",)),
        WheelInstall("ds-vllm", ENV, "vllm==0.8.5+cu118", wheel, after=("ds-torch",)),
        GitClone("ds-repo", v.get("deepseek_repo") or REPO, REPO_DIR, commit=v.get("deepseek_commit")),
        RequirementsFile("ds-requirements", ENV, f"{REPO_DIR}/requirements.txt", after=("ds-vllm", "ds-repo")),
        PipInstall("ds-build-tools", ENV, FLASH_ATTN_BUILD, after=("ds-requirements",)),
        FlashAttn("ds-flash-attn", ENV, fa, after=("ds-build-tools",)),
        RecordedCheck("ds-verify", ENV, code=VERIFY_085, after=("ds-flash-attn",),
                      describe="torch 2.6.0 with CUDA 11.8, CUDA available, flash_attn imports"),
    ]


def upstream_steps(v) -> list[Step]:
    return [
        Venv("ds-venv", UPSTREAM_ENV, ">=3.10"),
        PipInstall("ds-vllm", UPSTREAM_ENV, ["vllm>=0.11.1"], after=("ds-venv",)),
        RecordedCheck("ds-verify", UPSTREAM_ENV, code=VERIFY_UPSTREAM, after=("ds-vllm",),
                      describe="vLLM with its DeepSeek-OCR model and NGramPerReqLogitsProcessor"),
    ]


def build_deepseek_plan(recipe: str, v: dict) -> Plan:
    from ..models.plan import build_models_plan

    steps = vllm085_steps(v) if recipe == "deepseek-ocr-vllm085" else upstream_steps(v)
    if str(v.get("models", True)).lower() not in ("0", "false", "no", "off"):
        models = build_models_plan(v, names=["DeepSeek-OCR"], source=v.get("model_source", "hf"))
        have = {s.name for s in steps}
        steps += [s for s in models.steps if s.name not in have]
    return Plan(recipe, steps)


# ------------------------------------------------------------------ serving
# Why `serve --backend deepseek` is upstream vLLM's, found in the two sources (DeepSeek-OCR e4ac34e, vllm 0.8.5):
# vLLM 0.8.5 has no DeepseekOCRForCausalLM ("Model architectures ['DeepseekOCRForCausalLM'] are not supported
# for now", DeepSeek-OCR#5, vLLM#27314); the repository's scripts register it in-process.  A launcher could
# register it first too (with VLLM_USE_V1=0 and --disable-frontend-multiprocessing the engine stays in that
# process), but the repository's processor (process/image_process.py, process_one) unpacks each image item as
# the pre-tokenized list its own tokenize_with_images() builds from config.py's PROMPT, and
# deepseek_ocr.py reads the image size from that list: the PIL image a chat request's image_url becomes never
# fits ("Failed to apply DeepseekOCRProcessor").  So no OpenAI request can reach the model on 0.8.5.
NO_SERVER_085 = ("vLLM 0.8.5 (deepseek-ocr-env) cannot serve DeepSeek-OCR over the OpenAI API: the repository "
                 "registers DeepseekOCRForCausalLM only inside its batch scripts, and its image processor takes only "
                 "the pre-tokenized images those scripts build, never a request's image. --backend deepseek serves "
                 "on upstream vLLM: `inv install --recipe deepseek-ocr` first; on the 0.8.5 stack run the scripts "
                 "with `inv deepseek-run`")


def vllm_server(python, model, port, host) -> list[str]:
    """Seed 003 section 3.4's OpenAI server on upstream vLLM, with the flags of vLLM's DeepSeek-OCR recipe."""
    argv = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--served-model-name",
            SERVED_NAME, "--trust-remote-code", "--dtype", "bfloat16", "--max-model-len", "8192",
            "--gpu-memory-utilization", "0.9", "--host", host, "--port", str(port),
            "--logits-processors", "vllm.model_executor.models.deepseek_ocr:NGramPerReqLogitsProcessor",
            "--no-enable-prefix-caching", "--mm-processor-cache-gb", "0"]
    return argv


# ------------------------------------------------------------------ Dockerfile
# What RFC 3986 allows in a URL: a mirror var holding anything else (a backtick, a space, a quote, a
# backslash) is a typo or an attack, and is refused before it can reach a RUN line or BUILD.md.
_URL_CHARS = re.compile(r"[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%-]+")


def docker_url(var: str, url: str) -> str:
    """A mirror URL bound for the Dockerfile or BUILD.md: an http(s)/file URL of URL characters only, or one
    line naming the var."""
    text = check_url(var, url)
    if not _URL_CHARS.fullmatch(text):
        bad = sorted({ch for ch in text if not _URL_CHARS.fullmatch(ch)})
        raise UsageError(f"inventory var {var}: {masked(text)!r} holds {', '.join(map(repr, bad))}, which no URL "
                         f"holds")
    return text


def sh_quoted(text: str) -> str:
    """One shell word that stays one word, always in single quotes (shlex.quote's escaping, without its bare
    form), so the Dockerfile's and BUILD.md's values read alike whatever they hold."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def arg_default(text: str) -> str:
    """A Dockerfile ARG default as Docker's own word parser reads it back: bare when it holds neither `$`
    (Docker expands $NAME and ${NAME} there) nor a quote, else in double quotes with each $ escaped (URL
    characters hold no '"' or backslash: docker_url saw to that)."""
    if not any(ch in text for ch in "$'"):
        return text
    return '"' + text.replace("$", "\\$") + '"'


def _docker_pip(pip: dict) -> tuple[str, list[str], str, str, list[str]]:
    """(the index for the PIP_INDEX_URL build argument, more `pip config set` commands, a prefix for each
    pip RUN, the torch index, build notes) from the mirror vars.

    A URL without credentials goes into the image's pip config, as the seed does with its Tsinghua
    mirror.  One with credentials never enters the Dockerfile or the image: each pip RUN reads it
    from a BuildKit secret (`docker build --secret id=...,env=...`), and BUILD.md says how.  Every
    URL is one quoted shell word wherever a shell reads it (the RUN lines, BUILD.md's export lines).
    """
    index, extras, hosts = index_urls(pip)
    index = docker_url("pip_index_url", index) if index else None
    extras = [docker_url("pip_extra_index_url", u) for u in extras]
    torch = docker_url("torch_index_url", own_index(pip, "torch_index_url", CU118_INDEX))
    mounts, notes, config, plain = [], [], [], ""
    for var, env, urls in (("pip_index_url", "PIP_INDEX_URL", [index] if index else []),
                           ("pip_extra_index_url", "PIP_EXTRA_INDEX_URL", extras)):
        if any(masked(u) != u for u in urls):
            mounts.append(f"--mount=type=secret,id={var},env={env}")
            notes.append(f"export {env}={sh_quoted(' '.join(masked(u) for u in urls))} (with the real credentials) "
                         f"and add --secret id={var},env={env} to docker build")
        elif urls and var == "pip_index_url":
            plain = urls[0]
        elif urls:
            config.append(f"pip config set global.extra-index-url {sh_quoted(' '.join(urls))}")
    if hosts:
        config.append(f"pip config set global.trusted-host {sh_quoted(' '.join(hosts))}")
    torch_arg = shlex.quote(torch)
    if masked(torch) != torch:
        mounts.append("--mount=type=secret,id=torch_index_url,env=TORCH_INDEX_URL")
        notes.append(f"export TORCH_INDEX_URL={sh_quoted(masked(torch))} (with the real credentials) and add "
                     f"--secret id=torch_index_url,env=TORCH_INDEX_URL to docker build")
        torch_arg = '"$TORCH_INDEX_URL"'
    return plain, config, "".join(m + " " for m in mounts), torch_arg, notes


def dockerfile(base_image="nvidia/cuda:11.8.0-devel-ubuntu22.04", python_version="3.12.9",
               wheel="vllm-0.8.5+cu118-cp38-abi3-manylinux1_x86_64.whl", index_url=None, pip=None) -> str:
    """Seed 003 section 1.2, with its punctuation restored (the seed's text lost its '=', '&&' and quotes).

    The guide's pip mirror line (`pip config set global.index-url https://pypi.tuna.tsinghua.edu.cn/simple`)
    is the PIP_INDEX_URL build argument: `index_url` (inv install --docker --pip-index-url, else the
    pip_index_url var) is its default, `docker build --build-arg PIP_INDEX_URL=...` changes it per build,
    empty keeps pip's own index.  `pip` holds the other mirror vars (pip_extra_index_url,
    pip_trusted_host, torch_index_url); an index URL with credentials comes from a BuildKit secret."""
    pip = dict(pip or {})
    if index_url:
        pip["pip_index_url"] = index_url
    plain, config, run, torch_index, _ = _docker_pip(pip)
    pip_index = ("RUN if [ -n \"$PIP_INDEX_URL\" ]; then pip config set global.index-url \"$PIP_INDEX_URL\"; fi && "
                 + "".join(c + " && " for c in config) + "\\\n    pip install --upgrade pip\n")
    syntax = "# syntax=docker/dockerfile:1.10\n" if run else ""
    return f"""{syntax}# DeepSeek-OCR: CUDA 11.8, Python {python_version}, torch 2.6.0, vLLM 0.8.5, flash-attn 2.7.3
# (written by ocrdeploy from the deployment guide). Put requirements.txt (from the DeepSeek-OCR repository),
# sources.list, SimHei.ttf and {wheel} next to this file.
ARG BASE_IMAGE={base_image}
FROM ${{BASE_IMAGE}}
ARG PIP_INDEX_URL={arg_default(plain)}
ENV PYTHON_VERSION={python_version}
ENV PYTHONUNBUFFERED=1
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /workspace
COPY requirements.txt sources.list SimHei.ttf {wheel} /workspace/
RUN mv /workspace/SimHei.ttf /usr/share/fonts/ && \\
    mv /workspace/sources.list /etc/apt/sources.list
RUN apt-get update && apt-get install -y \\
    wget curl git vim build-essential zlib1g-dev \\
    libncurses5-dev libgdbm-dev libnss3-dev libssl-dev \\
    libreadline-dev libffi-dev libsqlite3-dev libbz2-dev \\
    liblzma-dev pkg-config cmake && \\
    rm -rf /var/lib/apt/lists/*
RUN cd /tmp && \\
    wget https://www.python.org/ftp/python/${{PYTHON_VERSION}}/Python-${{PYTHON_VERSION}}.tgz && \\
    tar -xzf Python-${{PYTHON_VERSION}}.tgz && \\
    cd Python-${{PYTHON_VERSION}} && \\
    ./configure --enable-optimizations --enable-shared && \\
    make -j$(nproc) && \\
    make altinstall && \\
    ldconfig && \\
    cd /tmp && rm -rf Python-*
RUN ln -sf /usr/local/bin/python3.12 /usr/local/bin/python3 && \\
    ln -sf /usr/local/bin/python3.12 /usr/local/bin/python && \\
    curl -sS https://bootstrap.pypa.io/get-pip.py | python3.12
ENV PATH=/usr/local/cuda/bin:$PATH
ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
ENV CUDA_HOME=/usr/local/cuda
{pip_index}RUN {run}pip install torch==2.6.0 torchvision==0.21.0 torchaudio==2.6.0 --index-url {torch_index}
RUN {run}pip install {wheel}
RUN {run}pip install -r requirements.txt
RUN {run}pip install {" ".join(FLASH_ATTN_BUILD)}
RUN {run}pip install flash-attn==2.7.3 --no-build-isolation
RUN python -c "import transformers; print('transformers OK')"
CMD ["/bin/bash"]
"""


GUIDE_PIP_MIRROR = "https://pypi.tuna.tsinghua.edu.cn/simple"   # seed 003 1.2's pip mirror


def docker_commands(tag="deepseek-ocr-cuda11.8-pytorch2.6:v1.0") -> list[str]:
    return [f"docker build -t {tag} .",
            f"docker build --build-arg PIP_INDEX_URL={GUIDE_PIP_MIRROR} -t {tag} .   # pip through the guide's "
            f"mirror",
            f"docker build --no-cache -t {tag} .   # when a cached layer kept an old dependency",
            f"nohup docker build -t {tag} . > build.log 2>&1 &   # the build is long (Python and flash-attn)",
            f'docker run -it --gpus all -v "$(pwd)":/workspace {tag}']


# ------------------------------------------------------------------ config.py
MODES = {"tiny": (512, 512, False), "small": (640, 640, False), "base": (1024, 1024, False),
         "large": (1280, 1280, False), "gundam": (1024, 640, True)}
VISION_TOKENS = {"tiny": 64, "small": 100, "base": 256, "large": 400}
GROUNDING = "<image>\n<|grounding|>Convert the document to markdown."
# The notes' six prompts (seed 003 2.4, as DeepSeek-OCR's README lists them): <|grounding|> keeps the layout (tables
# and heading levels come out right); Free OCR is fast without structure; figures and locating have their own.
PROMPTS = {
    "grounding": GROUNDING,
    "free": "<image>\nFree OCR.",
    "ocr-image": "<image>\n<|grounding|>OCR this image.",
    "figure": "<image>\nParse the figure.",
    "describe": "<image>\nDescribe this image in detail.",
    "locate": "<image>\nLocate <|ref|>{ref}<|/ref|> in the image.",
}


def prompt_for(choice: str) -> str:
    """--prompt NAME (one of PROMPTS), or locate:TEXT for the Locate prompt with TEXT between its ref tags."""
    name, _, ref = str(choice).partition(":")
    names = ", ".join(n + (":TEXT" if n == "locate" else "") for n in PROMPTS)
    if name not in PROMPTS or (name == "locate") != bool(_):
        raise UsageError(f"--prompt {choice}: choose {names}")
    if name == "locate":
        ref = ref.strip()
        if not ref or any(c in ref for c in "\n\r") or "<|" in ref or "|>" in ref:
            raise UsageError(f"--prompt {choice}: locate:TEXT takes one line of text to find, without <| |> tags")
        return PROMPTS["locate"].format(ref=ref)
    return PROMPTS[name]
from .registry import MODE_BY_SIZE  # noqa: E402 - the sold-size row lives with the recipe's requirements
MAX_CROPS_LIMIT = 9      # config.py: "max:9"
MIN_CROPS = 2


def mode_for(gb: int) -> str:
    from ..checks.preflight import mode_for_size

    return mode_for_size(MODE_BY_SIZE, gb)


def mode_of(values: dict) -> str:
    """The named mode config.py's sizes make, or "custom"."""
    for name, (base, image, crop) in MODES.items():
        if (values.get("BASE_SIZE"), values.get("IMAGE_SIZE"), bool(values.get("CROP_MODE"))) == (base, image, crop):
            return name
    return "custom"


def vision_tokens(values: dict) -> int:
    """The most vision tokens one image can take with these values, counted as the upstream model prints them
    (the global view's BASE_SIZE/64 squared, plus IMAGE_SIZE/64 squared per crop): Tiny 64, Small 100,
    Base 256, Large 400, Gundam 256 + 100 per crop.  What a downgrade must never raise."""
    base = (int(values.get("BASE_SIZE") or 0) // 64) ** 2
    if not values.get("CROP_MODE"):
        return base
    return base + int(values.get("MAX_CROPS") or 0) * (int(values.get("IMAGE_SIZE") or 0) // 64) ** 2


def config_values(gb: int, cpus: int, *, mode=None, model_path, input_path, output_path, max_crops=None,
                  max_concurrency=None, prompt=GROUNDING) -> tuple[dict, list[str]]:
    """DeepSeek-OCR-vllm/config.py values for a card sold as `gb` GB; returns (values, notes).

    PRINT_NUM_VIS_TOKENS is not among them: it stays as the user has it (deepseek-verify turns it on for
    its own run only); nor is PROMPT when `prompt` is None (the file's own is kept)."""
    notes = []
    mode = mode or mode_for(gb)
    if mode not in MODES:
        raise UsageError(f"--mode {mode!r}: choose {', '.join(MODES)}")
    base, image, crop = MODES[mode]
    crops = 6 if max_crops is None else int(max_crops)      # 2-9, checked where the option is read
    if gb < 24 and crops > 6:
        notes.append(f"MAX_CROPS {crops} lowered to 6: keep 6 under 24 GB")
        crops = 6
    if max_concurrency is not None:
        conc = int(max_concurrency)
    elif gb >= 40:
        conc = 100
    elif gb >= 32:
        conc = 50
    elif gb >= 24:
        conc = 40
    else:
        conc = 30
    for p in (model_path, input_path, output_path):
        if not str(p).startswith("/"):
            raise UsageError(f"{p}: MODEL_PATH, INPUT_PATH and OUTPUT_PATH must be absolute paths")
    values = {"BASE_SIZE": base, "IMAGE_SIZE": image, "CROP_MODE": crop, "MIN_CROPS": MIN_CROPS, "MAX_CROPS": crops,
              "MAX_CONCURRENCY": conc, "NUM_WORKERS": max(1, min(64, cpus)), "SKIP_REPEAT": True,
              "MODEL_PATH": model_path, "INPUT_PATH": input_path, "OUTPUT_PATH": output_path}
    if prompt is not None:
        values["PROMPT"] = prompt
    notes.insert(0, f"{mode.capitalize()} mode for a {gb} GB card")
    if mode == "gundam" and gb < 32:
        notes.append("Gundam is tight below 32 GB (the guide: 24 GB is tight, 32 GB advised)")
    return values, notes


# Each mode's next step down when a batch runs out of memory: only ever to a mode that needs less.
_SMALLER = {"gundam": "base", "large": "base", "base": "small", "small": "tiny"}


def downgrade(values: dict, single_image=False) -> tuple[dict, str]:
    """The next out-of-memory remedy (seed 003 3.2 and 5.4): MAX_CONCURRENCY down to 30, then (crop modes)
    MAX_CROPS 4, then the next smaller mode (Gundam and Large to Base, Base to Small, Small to Tiny); when one
    image alone runs out of memory, BASE_SIZE 640.  No step raises concurrency, crops, sizes or vision tokens."""
    v = dict(values)
    mode = mode_of(v)
    if single_image:
        if int(v.get("BASE_SIZE") or 0) > 640:
            v["BASE_SIZE"] = 640
            if not v.get("CROP_MODE"):             # without crops the image is the global view: Small's 640
                v["IMAGE_SIZE"] = min(int(v.get("IMAGE_SIZE") or 640), 640)
            return v, "BASE_SIZE 640 (one image alone ran out of memory)"
        raise UsageError("BASE_SIZE is already 640 or less: no further single-image remedy; try --mode tiny")
    if int(v.get("MAX_CONCURRENCY") or 0) > 30:
        v["MAX_CONCURRENCY"] = 30
        return v, f"MAX_CONCURRENCY {values['MAX_CONCURRENCY']} -> 30 (halved, to 30)"
    if v.get("CROP_MODE") and int(v.get("MAX_CROPS") or 0) > 4:
        v["MAX_CROPS"] = 4
        return v, "MAX_CROPS 4"
    smaller = _SMALLER.get(mode)
    if smaller is None and mode == "custom":        # sizes set by hand: the named mode below what they cost
        fits = [m for m in MODES if m != "gundam" and VISION_TOKENS[m] < vision_tokens(v)]
        smaller = max(fits, key=VISION_TOKENS.get) if fits else None
    if smaller is None:
        raise UsageError(f"config.py is at {mode.capitalize()} mode with MAX_CONCURRENCY "
                         f"{v.get('MAX_CONCURRENCY')}: no smaller setting left; use a GPU with more memory")
    b, i, c = MODES[smaller]
    v.update(BASE_SIZE=b, IMAGE_SIZE=i, CROP_MODE=c)
    return v, f"{smaller.capitalize()} mode (BASE_SIZE {b}, IMAGE_SIZE {i}, CROP_MODE {c})"


_ASSIGN = re.compile(r"^([A-Z_][A-Z0-9_]*)\s*=\s*(.+?)\s*(#.*)?$")


def read_config(text: str) -> dict:
    import ast

    out = {}
    for line in text.splitlines():
        m = _ASSIGN.match(line)
        if m:
            try:
                out[m.group(1)] = ast.literal_eval(m.group(2))
            except (ValueError, SyntaxError):
                continue
    return out


def render_config(text: str, values: dict) -> str:
    """The file with each value's assignment replaced in place (comments kept), new names appended."""
    done, lines = set(), []
    for line in text.splitlines():
        m = _ASSIGN.match(line)
        if m and m.group(1) in values:
            comment = f"  {m.group(3)}" if m.group(3) else ""
            lines.append(f"{m.group(1)} = {values[m.group(1)]!r}{comment}")
            done.add(m.group(1))
        else:
            lines.append(line)
    missing = [k for k in values if k not in done]
    if missing:
        lines.append("")
        lines.append("# set by ocrdeploy deepseek-config")
        lines += [f"{k} = {values[k]!r}" for k in missing]
    return "\n".join(lines) + "\n"


def write_docker_context(directory, index_url=None, pip=None) -> list[str]:
    """The Dockerfile and a BUILD.md with the build and run commands; docker is not needed here."""
    from pathlib import Path

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    pip = dict(pip or {})
    if index_url:
        pip["pip_index_url"] = index_url          # --pip-index-url wins over the var
    (d / "Dockerfile").write_text(dockerfile(pip=pip))
    notes = _docker_pip(pip)[4]
    cmds = docker_commands()
    (d / "BUILD.md").write_text(
        "# Building the DeepSeek-OCR image\n\nPut these next to the Dockerfile first: `requirements.txt` (from the\n"
        "DeepSeek-OCR repository), `sources.list` (your apt mirror list), `SimHei.ttf` and\n"
        "`vllm-0.8.5+cu118-cp38-abi3-manylinux1_x86_64.whl` (from the vLLM v0.8.5 release).\n"
        "The build compiles Python 3.12.9 and flash-attn: it is long, flash-attn can take 8 GB of\n"
        "memory or more, and the image is about 15 GB.\n\n"
        + "".join(f"Your package index needs credentials: {n}; they stay out of the image.\n\n" for n in notes)
        + "```bash\n" + "\n".join(cmds) + "\n```\n\n"
        "Inside the container check: torch 2.6.0 with CUDA 11.8, `torch.cuda.is_available()`, and\n"
        "`import flash_attn`; an `ImportError: libcudart.so.11.0` means LD_LIBRARY_PATH was overridden.\n")
    return [str(d / "Dockerfile"), str(d / "BUILD.md")]


# ------------------------------------------------------------------ transformers inference (notes 4.1, 6)
_COMPRESS = {"vision_tokens": re.compile(r"^valid image tokens:\s*(\d+)\s*$", re.M),
             "text_tokens": re.compile(r"^output texts tokens \(valid\):\s*(\d+)\s*$", re.M),
             "compression_ratio": re.compile(r"^compression ratio:\s*([0-9.]+)\s*$", re.M)}


def tf_job(values: dict, image: str, output: str) -> dict:
    """What deepseek_tf.py runs for one image: config.py's model, prompt and mode sizes (deepseek-config stays the
    one place that chooses them), with the notes' flash_attention_2 on the GPU."""
    return {"model": values["MODEL_PATH"], "image": image, "output": output,
            "prompt": values.get("PROMPT") or GROUNDING, "base_size": int(values["BASE_SIZE"]),
            "image_size": int(values["IMAGE_SIZE"]), "crop_mode": bool(values["CROP_MODE"]),
            "attn": "flash_attention_2", "device": "cuda"}


def tf_report(stdout: str, outputs, values: dict) -> tuple[dict, list[dict]]:
    """(figures, checks) of one infer() run, as the notes' 4.2/4.3 judge it: result.mmd written and not empty, the
    vision tokens and compression ratio test_compress prints, and no more vision tokens than the mode allows."""
    figures = {}
    for key, rx in _COMPRESS.items():
        found = rx.findall(stdout or "")
        if found:
            figures[key] = float(found[-1]) if key == "compression_ratio" else int(found[-1])
    mmd = [o for o in outputs if o.get("name", "").endswith("result.mmd")]
    most = vision_tokens({**values, "MAX_CROPS": int(values.get("MAX_CROPS") or MAX_CROPS_LIMIT)})
    checks = [
        {"check": "result.mmd written", "ok": bool(mmd and mmd[0].get("size")),
         "detail": f"{mmd[0]['name']} ({mmd[0].get('size', 0)} bytes)" if mmd else "no result.mmd in the output"},
        {"check": "test_compress figures", "ok": {"vision_tokens", "compression_ratio"} <= set(figures),
         "detail": ", ".join(f"{k} {v}" for k, v in figures.items()) or "infer() printed no compression figures"},
    ]
    if "vision_tokens" in figures:
        checks.append({"check": "vision tokens within the mode", "ok": 0 < figures["vision_tokens"] <= most,
                       "detail": f"{figures['vision_tokens']} of at most {most} ({mode_of(values)} mode)"})
    return figures, checks
