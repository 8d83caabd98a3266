"""The probe and the nvidia-smi parsers against recorded outputs (tests/fixtures/nvidia-smi)."""

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ocrdeploy.provision import facts as facts_mod
from ocrdeploy.provision import probe
from ocrdeploy.provision.command import remote_python


def local_facts(tmp_path, **request):
    return facts_mod.normalise(probe.collect(facts_mod.probe_request(str(tmp_path / "wd"), **request)))


def test_rtx5090(smi_box, tmp_path):
    smi_box("rtx5090-590")
    gpu = local_facts(tmp_path, net_timeout=0)["gpu"]
    assert gpu["source"] == "nvidia-smi" and gpu["error"] is None
    assert gpu["driver"] == "590.48.01" and gpu["cuda"] == "13.1"
    (g,) = gpu["gpus"]
    assert (g["index"], g["name"], g["memory_total_mib"], g["processes"]) == (0, "NVIDIA GeForce RTX 5090", 32607, [])


def test_a100_535(smi_box, tmp_path):
    smi_box("a100-535")
    gpu = local_facts(tmp_path, net_timeout=0)["gpu"]
    assert gpu["driver"] == "535.247.01" and gpu["cuda"] == "12.2"
    assert gpu["gpus"][0]["memory_total_mib"] == 40960


def test_three_gpus_with_busy_gpu0(smi_box, tmp_path):
    smi_box("3gpu-busy0")
    gpus = local_facts(tmp_path, net_timeout=0)["gpu"]["gpus"]
    assert [g["index"] for g in gpus] == [0, 1, 2]
    assert gpus[0]["processes"] == [{"pid": 48213, "name": "/root/ocr/vllm-ocr-env/bin/python3.13", "used_mib": 28126}]
    assert gpus[1]["processes"] == [] and gpus[2]["memory_used_mib"] == 492


def test_driver_unreachable(smi_box, tmp_path):
    smi_box("no-driver")
    gpu = local_facts(tmp_path, net_timeout=0)["gpu"]
    assert gpu["gpus"] == [] and gpu["driver"] is None
    assert "exit code 9" in gpu["error"] and "couldn't communicate with the NVIDIA driver" in gpu["error"]


def test_no_nvidia_smi(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("OCRDEPLOY_PROBE_NO_NVML", "1")
    gpu = local_facts(tmp_path, net_timeout=0)["gpu"]
    assert gpu["source"] == "none" and gpu["error"] == "nvidia-smi not found"


def test_r610_header_spelling():
    # R610+ prints "KMD Version" / "CUDA UMD Version" (github.com/sgl-project/sglang/issues/27487)
    line = "| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3     |"
    assert facts_mod.parse_header_cuda(line) == "13.3"
    assert facts_mod.parse_header_cuda("| ... Driver Version: 575.64.03      CUDA Version: N/A      |") is None


def test_venvs_read_from_dist_info(tmp_path):
    wd = tmp_path / "wd"
    site = wd / "vllm-ocr-env" / "lib" / "python3.13" / "site-packages"
    (site / "torch-2.14.0.dist-info").mkdir(parents=True)
    (site / "torch-2.14.0.dist-info" / "RECORD").write_text("torch/__init__.py,,\n")
    (site / "transformers-5.19.0.dev0.dist-info").mkdir()
    (site / "transformers-5.19.0.dev0.dist-info" / "direct_url.json").write_text(
        json.dumps({"url": "file:///src/transformers", "dir_info": {"editable": True}}))
    (site / "Jinja2-3.1.6.dist-info").mkdir()
    (wd / "vllm-ocr-env" / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.13.9\n")
    (wd / "not-a-venv").mkdir()
    facts = facts_mod.normalise(probe.collect(facts_mod.probe_request(str(wd), net_timeout=0,
                                                                      paths=[str(site), str(wd / "nope")])))
    venv = facts["venvs"]["vllm-ocr-env"]
    assert list(facts["venvs"]) == ["vllm-ocr-env"]
    assert venv["python"] == "3.13.9" and venv["home"] == "/usr/bin"     # the interpreter it was made from
    assert venv["dists"]["torch"] == {"version": "2.14.0", "editable": False, "complete": True}
    assert venv["dists"]["jinja2"]["complete"] is False  # no RECORD: an interrupted install
    assert venv["dists"]["transformers"]["editable"] is True
    assert venv["dists"]["transformers"]["version"] == "5.19.0.dev0"
    assert venv["dists"]["jinja2"]["version"] == "3.1.6"
    assert facts["files"][str(site)]["type"] == "dir" and not facts["files"][str(wd / "nope")]["exists"]


def test_pythons_are_real_interpreters(tmp_path):
    facts = local_facts(tmp_path, net_timeout=0)
    assert facts["pythons"], "at least the interpreter running the tests' python3.x should be found"
    for p in facts["pythons"]:
        out = subprocess.run([p["path"], "-c", "import sys;print('%d.%d.%d' % sys.version_info[:3])"],
                             capture_output=True, text=True, check=True).stdout.strip()
        assert out == p["version"]
        assert "/shims/" not in p["path"]


def test_the_hosts_python3_is_marked(tmp_path, monkeypatch):
    """The guide makes the SDK env with `python3 -m venv`: the probe says which interpreter that is."""
    real = os.path.realpath(sys.executable)
    d = tmp_path / "bin"
    d.mkdir()
    os.symlink(real, d / ("python%d.%d" % sys.version_info[:2]))
    os.symlink(real, d / "python3")
    monkeypatch.setenv("PATH", f"{d}:/usr/bin:/bin")
    facts = local_facts(tmp_path, net_timeout=0)
    marked = [p for p in facts["pythons"] if p.get("default")]
    assert [os.path.realpath(p["path"]) for p in marked] == [real]


PROXIES = [  # (value as users write it, what the facts show)
    ("http://alice:s3cret@proxy.corp:3128", "http://***@proxy.corp:3128"),
    ("http://alice:s3c@ret@proxy.corp:3128", "http://***@proxy.corp:3128"),        # '@' in the password
    ("http://alice:s3c/ret@proxy.corp:3128", "http://***@proxy.corp:3128"),        # '/' in the password
    ("alice:s3cret@proxy.corp:3128", "***@proxy.corp:3128"),                       # no scheme
    ("http://proxy.corp:3128/", "http://proxy.corp:3128/"),                        # nothing to hide
]


@pytest.mark.parametrize("value, shown", PROXIES)
def test_proxy_facts_mask_credentials(monkeypatch, tmp_path, value, shown):
    monkeypatch.setenv("https_proxy", value)
    monkeypatch.setenv("no_proxy", "localhost,.corp")
    proxy = local_facts(tmp_path, net_timeout=0)["proxy"]
    assert proxy["https_proxy"] == shown and "s3c" not in json.dumps(proxy)
    assert proxy["loopback_bypassed"] == {"127.0.0.1": False, "localhost": True}


@pytest.mark.parametrize("value, shown", PROXIES)
def test_posix_fallback_probe_masks_proxies_too(tmp_path, value, shown):
    script = (Path(facts_mod.__file__).parent / "probe_fallback.sh").read_text()
    out = subprocess.run(["sh", "-c", script, "sh", str(tmp_path / "wd")], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "http_proxy": value}, check=True).stdout
    facts = facts_mod.normalise(facts_mod.parse_probe_output("h", out, "", 0))
    assert facts["probe"]["kind"] == "sh" and facts["proxy"]["http_proxy"] == shown
    assert "s3c" not in json.dumps(facts)


@pytest.mark.parametrize("text, shown", [
    ("git clone https://oauth2:TOK3N@gitlab.corp/org/sdk.git /wd/sdk", "git clone https://***@gitlab.corp/org/sdk.git /wd/sdk"),
    ("https://TOK3N@github.com/o/r", "https://***@github.com/o/r"),
    ("git+https://github.com/org/repo.git@v1.0", "git+https://github.com/org/repo.git@v1.0"),   # a ref, not a user
    ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
    ("http://host:8080/a@b", "http://host:8080/a@b"),
    # the authority ends at '?' or '#' as urlsplit reads it: an '@' in a query or fragment is no credential
    ("https://host?x=a@b", "https://host?x=a@b"),
    ("see https://host:8080#a@b and http://u:pw@proxy:3128", "see https://host:8080#a@b and http://***@proxy:3128"),
    ("https://u:p?w@host/simple", "https://***@host/simple"),            # a password with '?' in it
])
def test_mask_url_in_text(text, shown):
    from ocrdeploy.provision.probe import mask_url

    assert mask_url(text) == shown


def test_posix_fallback_probe_parses_like_the_python_one(tmp_path):
    """The sh fallback, run for real by sh with the 3-GPU recording on PATH."""
    script = (Path(facts_mod.__file__).parent / "probe_fallback.sh").read_text()
    box = Path(__file__).parents[1] / "fixtures" / "nvidia-smi" / "3gpu-busy0"
    out = subprocess.run(["sh", "-c", script, "sh", str(tmp_path / "wd")], capture_output=True, text=True,
                         env={"PATH": f"{box}:/usr/bin:/bin", "HOME": str(tmp_path)}, check=True).stdout
    facts = facts_mod.normalise(facts_mod.parse_probe_output("h", out, "", 0))
    assert facts["probe"]["kind"] == "sh"
    assert facts["workdir"]["path"] == str(tmp_path / "wd") and facts["workdir"]["free"] > 0
    assert facts["cpu"]["count"] >= 1 and facts["memory"]["total"] > 0
    assert facts["gpu"]["driver"] == "590.48.01"
    assert [len(g["processes"]) for g in facts["gpu"]["gpus"]] == [1, 0, 0]


def test_probe_command_is_one_quoted_argument_list():
    cmd = facts_mod.probe_command(facts_mod.probe_request("~/my dir; rm -rf x"))
    text = cmd.shell()
    assert text.startswith("env FALLBACK=")
    assert "'~/my dir; rm -rf x'" in text
    # the command really runs the probe through sh -> python3 and returns facts
    out = subprocess.run(["sh", "-c", text], capture_output=True, text=True, check=True, input=cmd.stdin)
    facts = facts_mod.parse_probe_output("h", out.stdout, out.stderr, 0)
    assert facts["probe"]["kind"] == "python" and facts["workdir"]["path"].endswith("my dir; rm -rf x")


def test_proxy_variables_in_capitals_are_read_and_no_proxy_follows_the_stdlib(monkeypatch, tmp_path):
    for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    monkeypatch.setenv("NO_PROXY", ".localhost")             # a suffix: urllib's rule makes localhost bypass
    proxy = local_facts(tmp_path, net_timeout=0)["proxy"]
    assert proxy["https_proxy"] == "http://proxy.corp:3128" and proxy["no_proxy"] == ".localhost"
    assert proxy["loopback_bypassed"] == {"127.0.0.1": False, "localhost": True}
    monkeypatch.setenv("NO_PROXY", "*")
    assert local_facts(tmp_path, net_timeout=0)["proxy"]["loopback_bypassed"] == {"127.0.0.1": True,
                                                                                 "localhost": True}


def test_inventory_proxies_reach_the_commands_and_the_checks(monkeypatch, tmp_path):
    """`http_proxy`, `https_proxy`, `no_proxy` in the inventory: every command on the host gets them, and
    the facts (so preflight's no_proxy check) are about that environment."""
    from ocrdeploy.checks.preflight import check_no_proxy
    from ocrdeploy.inventory.model import Host
    from ocrdeploy.provision.connection import LocalConnection
    from ocrdeploy.recipes import get_recipe

    for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    host = Host("localhost", vars={"workdir": str(tmp_path), "https_proxy": "http://bob:pw@proxy.corp:3128",
                                   "no_proxy": "127.0.0.1,localhost"})
    conn = LocalConnection(host)
    r = conn.run(["sh", "-c", 'echo "$https_proxy|$HTTPS_PROXY|$no_proxy"'])
    assert r.stdout.strip() == "http://bob:pw@proxy.corp:3128|http://bob:pw@proxy.corp:3128|127.0.0.1,localhost"
    assert "pw@" not in r.command                        # shown masked
    facts = facts_mod.gather(conn, facts_mod.probe_request(str(tmp_path), net_timeout=0))
    assert facts["proxy"]["https_proxy"] == "http://***@proxy.corp:3128"
    req = get_recipe("dspark").requirements
    assert check_no_proxy(facts, req).status == "pass"
    host.vars.pop("no_proxy")
    facts = facts_mod.gather(conn, facts_mod.probe_request(str(tmp_path), net_timeout=0))
    result = check_no_proxy(facts, req)
    assert result.status == "warn" and "127.0.0.1, localhost not in no_proxy" in result.message


def test_network_probes_keep_their_bound_when_name_lookups_hang(monkeypatch, tmp_path):
    """getaddrinfo is not bounded by a socket timeout (a dead nameserver: 5 s per attempt; issue 21 saw
    sources given up on after 3 s take 11 s).  Here every lookup of a non-loopback name hangs for 30 s."""
    import socket
    import time

    real = socket.getaddrinfo

    def hanging(host, *a, **kw):
        if host not in ("127.0.0.1", "localhost", "::1"):
            time.sleep(30)
        return real(host, *a, **kw)

    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    request = facts_mod.probe_request(str(tmp_path / "wd"), net_timeout=0.2,
                                      sources=[{"name": "mirror", "url": "https://mirror.example.com/simple/",
                                                "var": "pip_index_url"}])
    start = time.monotonic()
    raw = probe.collect(request)
    took = time.monotonic() - start
    assert took < 15, took                                 # 30 s per lookup without the bound
    assert raw["network"]["github"] == "unreachable" and "no answer within 0.2 s" in raw["network"]["detail"]
    (src,) = raw["sources"]["results"]
    assert src["reachable"] is False and src["error"] == "no answer within 0.6 s (name lookup included)"
    assert src["ms"] < 5000


def run_probe_command(tmp_path, cache):
    """The probe command as a host runs it (sh -c, then python3), with its cache in `cache`."""
    cmd = facts_mod.probe_command(facts_mod.probe_request(str(tmp_path / "wd"), net_timeout=0))
    return subprocess.run(["sh", "-c", cmd.shell()], capture_output=True, text=True, input=cmd.stdin,
                          env=dict(os.environ, XDG_CACHE_HOME=str(cache)), check=True).stdout


def kept_code(cache) -> Path:
    (path,) = (cache / "ocrdeploy").glob("probe-*.marshal")
    return path


def plant(path, source, mode=0o600):
    """A kept entry whose code prints a marker instead of probing: run, it shows the entry was used."""
    path.unlink()
    path.write_bytes(marshal.dumps((source, compile("print('@@KEPT CODE RAN')", "<planted>", "exec"))))
    path.chmod(mode)


def test_the_host_compiles_the_probe_once(tmp_path):
    cache = tmp_path / "cache"
    first = facts_mod.parse_probe_output("h", run_probe_command(tmp_path, cache), "", 0)
    path = kept_code(cache)
    assert path.stat().st_mode & 0o777 == 0o600
    again = facts_mod.parse_probe_output("h", run_probe_command(tmp_path, cache), "", 0)
    assert (first["probe"]["kind"], again["probe"]["kind"]) == ("python", "python")
    assert again["workdir"]["path"] == first["workdir"]["path"] and again["host"] == first["host"]
    plant(path, marshal.loads(path.read_bytes())[0])
    assert "@@KEPT CODE RAN" in run_probe_command(tmp_path, cache)     # the kept code is what runs


@pytest.mark.parametrize("why", ["another source", "group writable", "world writable", "another owner", "a symlink"])
def test_kept_code_runs_only_for_its_source_and_its_own_user(tmp_path, why):
    cache = tmp_path / "cache"
    run_probe_command(tmp_path, cache)
    path = kept_code(cache)
    source = marshal.loads(path.read_bytes())[0]
    plant(path, source + "\n# another version" if why == "another source" else source,
          {"group writable": 0o620, "world writable": 0o602}.get(why, 0o600))
    if why == "another owner":
        if os.geteuid() != 0:
            pytest.skip("needs root to give the file away")
        os.chown(path, 65534, 65534)
    if why == "a symlink":
        real = path.with_name("elsewhere")
        path.rename(real)
        path.symlink_to(real)
    out = run_probe_command(tmp_path, cache)
    assert "@@KEPT CODE RAN" not in out and facts_mod.parse_probe_output("h", out, "", 0)["probe"]["kind"] == "python"
    assert not path.is_symlink() and path.stat().st_uid == os.geteuid() and path.stat().st_mode & 0o777 == 0o600
    assert "@@KEPT CODE RAN" not in run_probe_command(tmp_path, cache)


def test_a_cache_that_cannot_be_written_is_no_cache(tmp_path):
    (tmp_path / "file").write_text("")
    for _ in range(2):
        out = run_probe_command(tmp_path, tmp_path / "file")       # its folder would be inside a file
        assert facts_mod.parse_probe_output("h", out, "", 0)["probe"]["kind"] == "python"


def test_the_probe_runs_without_the_site_module(tmp_path):
    """-S: no site-packages scan and no .pth or sitecustomize run on the host's interpreter (the probe is stdlib
    only); a helper that may import a third-party module keeps them."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(f"open({str(tmp_path / 'site-ran')!r}, 'w').close()\n")
    env = dict(os.environ, PYTHONPATH=str(hook), XDG_CACHE_HOME=str(tmp_path / "cache"))
    cmd = facts_mod.probe_command(facts_mod.probe_request(str(tmp_path / "wd"), net_timeout=0))
    for python in (None, sys.executable):        # the host's python3, and an ansible_python_interpreter
        run = cmd.with_python(python)
        out = subprocess.run(["sh", "-c", run.shell()], capture_output=True, text=True, input=run.stdin, env=env,
                             check=True).stdout
        ran = facts_mod.parse_probe_output("h", out, "", 0)["probe"]["python"]
        assert ran == python if python else ran
        assert not (tmp_path / "site-ran").exists()
    helper = remote_python("print('helper')", "x", "helper")
    assert subprocess.run(["sh", "-c", helper.shell()], capture_output=True, text=True, env=env,
                          check=True).stdout == "helper\n"
    assert (tmp_path / "site-ran").exists()


def test_the_probe_command_stays_well_under_one_argument_s_limit():
    """Over SSH the probe's command (the loader, the probe's source in its environment, the fallback) reaches the
    host's shell as one argument, which Linux refuses over 128 KiB (MAX_ARG_STRLEN: "Argument list too long").
    The diagnose scanner crossed it once; the probe keeps a margin, or its source moves to stdin too."""
    from ocrdeploy.provision.command import to_shell

    cmd = facts_mod.probe_command({"workdir": "~/ocrdeploy"})
    text = to_shell([str(a) for a in cmd.argv], {k: str(v) for k, v in (cmd.env or {}).items()})
    assert len(text.encode()) < 96 * 1024, len(text.encode())
