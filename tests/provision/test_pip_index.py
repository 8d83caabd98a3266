"""Mirror vars -> pip options: one place builds them for every pip step, credentials masked."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ocrdeploy.errors import UsageError
from ocrdeploy.provision.command import Command
from ocrdeploy.provision.pip_index import PipOptions, check_url, masked, pip_options

ROOT = Path(__file__).parents[2]
FACTS = ROOT / "tests" / "fixtures" / "facts" / "ubuntu2204-rtx5090-bare.json"
MIRROR = "https://ci:t0ken-s3cret@mirror.example.com/simple"


def test_vars_become_pip_options_in_order():
    v = {"pip_index_url": "https://pypi.tuna.tsinghua.edu.cn/simple",
         "pip_extra_index_url": "https://a.example/simple, https://b.example/simple",
         "pip_trusted_host": ["a.example", "10.0.0.5:8080"]}
    assert pip_options(v).args == [
        "--index-url", "https://pypi.tuna.tsinghua.edu.cn/simple",
        "--extra-index-url", "https://a.example/simple", "--extra-index-url", "https://b.example/simple",
        "--trusted-host", "a.example", "--trusted-host", "10.0.0.5:8080"]
    # a step's own index replaces the main one and keeps the extras and trusted hosts
    own = pip_options(v, "https://download.pytorch.org/whl/cu118").args
    assert own[:2] == ["--index-url", "https://download.pytorch.org/whl/cu118"]
    assert "https://pypi.tuna.tsinghua.edu.cn/simple" not in own and own.count("--trusted-host") == 2
    assert pip_options({}) == PipOptions([], {})    # no vars: pip keeps the host's own configuration


def test_credentials_run_unmasked_and_show_masked():
    opts = pip_options({"pip_index_url": MIRROR, "pip_extra_index_url": MIRROR})
    cmd = Command(["pip", "install", *opts.args, "x"], env=opts.env)
    shown = str(cmd)
    assert "t0ken-s3cret" not in shown and shown.count("https://***@mirror.example.com/simple") == 2
    # run: through the environment (on stdin, see test_secrets_off_argv), never the command line
    assert MIRROR not in cmd.shell(mask=False) and opts.env == {"PIP_INDEX_URL": MIRROR, "PIP_EXTRA_INDEX_URL": MIRROR}
    assert masked("http://user@host/simple") == "http://***@host/simple"
    assert masked("https://host/simple") == "https://host/simple"
    # a raw "@" in the password: urlsplit takes the netloc's LAST "@" as the end of the credentials, so must the mask
    # (it showed "https://***@ss@host/simple", half the password); an "@" past the host is the path's, not a credential
    from urllib.parse import urlsplit
    assert urlsplit("https://u:p@ss@host/simple").hostname == "host"
    assert masked("https://u:p@ss@host/simple") == "https://***@host/simple"
    assert masked("https://host/~user@example/simple") == "https://host/~user@example/simple"
    assert masked("https://host?x=a@b") == "https://host?x=a@b"
    url = "https://u:p@ss@host/simple"
    opts = pip_options({"pip_index_url": url})
    assert "p@ss" not in str(Command(["pip", "install", *opts.args, "x"], env=opts.env))
    # a password with '/' in it: urlsplit ends the netloc at the '/' and cannot read the port 'p' (pip cannot use such
    # a URL either): the one-line refusal shows it masked, urlsplit's quoted piece of the password included
    with pytest.raises(UsageError) as err:
        pip_options({"pip_index_url": "https://u:p/ss@host/simple"})
    assert "p/ss" not in str(err.value) and "'p'" not in str(err.value)
    assert "'https://***@host/simple' is not an http(s)" in str(err.value)
    # an '@' in a query is no credential: the URL goes on argv as written
    assert pip_options({"pip_index_url": "https://host/simple?x=a@b"}).args == ["--index-url", "https://host/simple?x=a@b"]


@pytest.mark.parametrize("var,value,needle", [
    ("pip_index_url", "mirror.example.com/simple", "inventory var pip_index_url: 'mirror.example.com/simple' is not"),
    ("pip_extra_index_url", "ftp://x/simple", "inventory var pip_extra_index_url: 'ftp://x/simple'"),
    ("pip_trusted_host", "http://a.example", "inventory var pip_trusted_host: 'http://a.example' is not a host"),
    ("pip_index_url", "h://u:pw@", "'h://***@' is not an http(s)"),
    ("pip_index_url", "http://[::1/simple", "inventory var pip_index_url: 'http://[::1/simple' is not an http(s)"),
    ("pip_extra_index_url", "https://u:pw@[::1", "inventory var pip_extra_index_url: 'https://***@[::1' is not"),
    ("pip_index_url", "http://mirror:99999/simple", "'http://mirror:99999/simple' is not an http(s)"),
])
def test_bad_values_are_one_clear_line(var, value, needle):
    with pytest.raises(UsageError) as exc:
        pip_options({var: value})
    assert needle in str(exc.value) and "pw@" not in str(exc.value)


def check_plan(recipe, *sets):
    env = dict(os.environ)
    env.pop("OCRDEPLOY_INVENTORY", None)
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "install", "--check", "--json", "--facts", str(FACTS),
                        "--recipe", recipe, "--set", "sdk_repo=https://github.com/OpenBMB/MiniCPM-OCR.git",
                        "--set", "vllm_src=/src/vllm", "--set", "transformers_src=/src/transformers",
                        *[a for s in sets for a in ("--set", s)]], capture_output=True, text=True, cwd=ROOT / "tests",
                       env=env)
    assert p.returncode in (0, 1), p.stderr
    assert "t0ken-s3cret" not in p.stdout + p.stderr
    return {s["step"]: s["commands"] for s in json.loads(p.stdout)["hosts"]["localhost"]["steps"]}


@pytest.mark.parametrize("installer", ["pip", "auto"])
def test_every_pip_step_of_a_recipe_uses_the_mirror_and_its_own_index_override(installer):
    plan = check_plan("deepseek-ocr-vllm085", f"pip_index_url={MIRROR}", "pip_trusted_host=mirror.example.com",
                      "torch_index_url=https://mirror.example.com/pytorch/whl/cu118", f"installer={installer}")
    pip = {step: cmds for step, cmds in plan.items() if any(" pip install" in c for c in cmds)}
    assert set(pip) >= {"tools-uv", "ds-torch", "ds-vllm", "tools-hub-clients"}
    for step, cmds in pip.items():
        uv = installer == "auto" and step != "tools-uv"      # uv itself is installed with pip
        assert ("/tools-env/bin/uv pip install --python " in cmds[0]) == uv, step
        assert ("--allow-insecure-host mirror.example.com" if uv else "--trusted-host mirror.example.com") in cmds[0]
        if step == "ds-torch":
            assert "--index-url https://mirror.example.com/pytorch/whl/cu118" in cmds[0]
            assert "***" not in cmds[0]
        else:
            var = "UV_INDEX_URL" if uv else "PIP_INDEX_URL"
            assert f"{var}='https://***@mirror.example.com/simple'" in cmds[0], step


def test_uv_gets_its_python_build_from_the_mirror_var():
    from ocrdeploy.provision.kinds import ManagedPython

    facts = {"workdir": {"path": "/w"}}
    (cmd,) = ManagedPython("python312", "3.12").commands(facts, {"python_install_mirror": "https://m.example/pbs"})
    assert str(cmd) == ("env UV_PYTHON_INSTALL_MIRROR=https://m.example/pbs /w/.ocrdeploy/tools-env/bin/uv python "
                        "install 3.12")
    (cmd,) = ManagedPython("python312", "3.12").commands(facts, {})
    assert not cmd.env


def test_compile_and_editable_steps_use_the_mirror_too():
    plan = check_plan("dspark", "pip_index_url=https://mirror.example.com/simple",
                      "paddle_index_url=https://mirror.example.com/paddle/cu129/")
    assert "--index-url https://mirror.example.com/paddle/cu129/ paddlepaddle-gpu==3.3.0" in plan["sdk-paddle"][0]
    for step in ("torch", "cuda-packages", "sdk-paddlex", "build-tools"):
        assert "--index-url https://mirror.example.com/simple" in plan[step][0], step
    # the compile and the editable installs resolve their dependencies from the index as well
    from ocrdeploy.provision.kinds import PipEditable
    from ocrdeploy.recipes.cuda_steps import VllmCompile

    facts = json.loads(FACTS.read_text())
    facts["files"] = {"/src/vllm": {"exists": True}, "@/minicpmvocr-sdk/sdk": {"exists": True}}
    facts["network"] = {"github": "reachable"}
    v = {"pip_index_url": "https://mirror.example.com/simple"}
    (compile_,) = VllmCompile("vllm-compile", "vllm-ocr-env", "/src/vllm").commands(facts, v)
    assert "pip install --index-url https://mirror.example.com/simple -e . --no-build-isolation" in str(compile_)
    (editable,) = PipEditable("sdk-install", "sdk-env", "@/minicpmvocr-sdk/sdk", "minicpmvocr").commands(facts, v)
    assert "pip install --index-url https://mirror.example.com/simple -e " in str(editable)


def docker(tmp_path, inv_vars, *sets):
    import yaml

    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": inv_vars}}))
    env = dict(os.environ)
    env.pop("OCRDEPLOY_INVENTORY", None)
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "install", "--recipe", "deepseek-ocr-vllm085", "--docker",
                        "--docker-dir", str(tmp_path / "ctx"), "--inventory", str(inv),
                        *[a for s in sets for a in ("--set", s)]], capture_output=True, text=True, cwd=ROOT, env=env)
    assert p.returncode == 0, p.stderr
    return (tmp_path / "ctx" / "Dockerfile").read_text(), (tmp_path / "ctx" / "BUILD.md").read_text()


def test_dockerfile_takes_the_mirror_vars(tmp_path):
    text, _ = docker(tmp_path, {"pip_index_url": "https://pypi.tuna.tsinghua.edu.cn/simple",
                                "pip_trusted_host": "pypi.tuna.tsinghua.edu.cn"},
                     "torch_index_url=https://mirror.example.com/whl/cu118")
    assert "ARG PIP_INDEX_URL=https://pypi.tuna.tsinghua.edu.cn/simple\n" in text
    assert "pip config set global.trusted-host 'pypi.tuna.tsinghua.edu.cn' && \\\n    pip install --upgrade pip" in text
    assert "torchaudio==2.6.0 --index-url https://mirror.example.com/whl/cu118\n" in text
    assert "syntax=docker" not in text


def test_dockerfile_keeps_index_credentials_out_of_the_image(tmp_path):
    text, build = docker(tmp_path, {"pip_index_url": MIRROR})
    assert "t0ken-s3cret" not in text + build and "ARG PIP_INDEX_URL=\n" in text
    assert text.startswith("# syntax=docker/dockerfile:1.10\n")
    pip_runs = [line for line in text.splitlines() if line.startswith("RUN") and "pip install" in line
                and "pip config" not in line]
    assert len(pip_runs) == 5 and all("--mount=type=secret,id=pip_index_url,env=PIP_INDEX_URL pip" in r
                                      for r in pip_runs)
    assert "export PIP_INDEX_URL='https://***@mirror.example.com/simple'" in build
    assert "--secret id=pip_index_url,env=PIP_INDEX_URL" in build


def test_an_option_given_url_is_named_by_its_option():
    with pytest.raises(UsageError) as exc:
        check_url("--endpoint", "http://[::1")
    assert str(exc.value).startswith("--endpoint: 'http://[::1' is not an http(s)")
    assert check_url("--endpoint", "https://hf-mirror.com") == "https://hf-mirror.com"
    assert check_url("hf_endpoint", "file:///srv/hub") == "file:///srv/hub"


@pytest.mark.parametrize("url", [
    "https://u:p@host/x", "https://u:p@ss@host/simple", "https://tok@host", "http://host/x@y", "https://u:p/w@host:8080/p",
    "https://u:p?w@host/x", "https://host?x=a@b", "https://host#a@b", "https://host:8080?x=a@b", "file:///a@b",
    "https://host", "", "git+https://oauth2:T@github.com/x.git", "HTTPS://u:p@h/", "u:p@proxy:3128", "user@host",
    "https://u:123/x@host", "h://u:pw@", "https://[::1]:8080/simple", "https://u:pw@[::1]:8080/simple"])
def test_the_inventory_masks_a_url_as_the_probe_does(url):
    """Two copies of one rule (the probe runs alone on the host; the inventory may not import the engine): held equal."""
    from ocrdeploy.provision.probe import mask_url

    assert masked(url) == mask_url(url)
