"""`inv diagnose` as a user runs it: exit codes, stdin, --json, --rules, --fix, over SSH."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[2]
OOM = "c++: fatal error: Killed signal terminated program cc1plus"


def run(args, *, cwd=ROOT, env=None, stdin=None):
    e = dict(os.environ, COLUMNS="200")
    e.pop("OCRDEPLOY_INVENTORY", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "ocrdeploy", "diagnose", *args], capture_output=True, text=True,
                          cwd=cwd, env=e, input=stdin, timeout=120)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_known_error_exit_1_with_cause_fix_and_filled_paths(tmp_path):
    inv = write(tmp_path, "inv.yml", yaml.safe_dump({"all": {"vars": {
        "workdir": "/data/ocr", "transformers_src": "/src/transformers"}}}))
    log = write(tmp_path, "start.log",
                "INFO boot\nValueError: The checkpoint you are trying to load has model type `minicpm_ocr` but "
                "Transformers does not recognize this architecture.\n")
    p = run(["--log", log, "--inventory", inv])
    assert p.returncode == 1, p.stderr
    assert "minicpm-ocr-arch-unknown" in p.stdout and "line 2" in p.stdout
    assert "/data/ocr/vllm-ocr-env/bin/pip install --no-deps -e /src/transformers" in p.stdout
    assert "model-arch-unknown" not in p.stdout  # the specific entry wins over the generic one


def test_exit_codes_harmless_unrecognised_clean(tmp_path):
    harmless = write(tmp_path, "h.log", "WARNING x undefined symbol: _ZSt8to_charsPcS_DF128_\n")
    unknown = write(tmp_path, "u.log", "Traceback (most recent call last):\n  File 'x'\nZeroDivisionError: boom\n")
    clean = write(tmp_path, "c.log", "INFO all good\n" * 50)
    assert run(["--log", harmless]).returncode == 0
    p = run(["--log", unknown])
    assert p.returncode == 3 and "ZeroDivisionError: boom" in p.stdout and "unrecognised" in p.stdout
    p = run(["--log", clean])
    assert p.returncode == 0 and "no known failure" in p.stdout


def test_several_logs_stdin_and_json(tmp_path):
    a = write(tmp_path, "a.log", f"{OOM}\n")
    p = run(["--log", a, "--log", "-", "--json"], stdin="OSError: [Errno 28] No space left on device\n")
    assert p.returncode == 1
    doc = json.loads(p.stdout)
    assert [r["file"] for r in doc["reports"]] == [a, "-"]
    assert doc["reports"][0]["findings"][0]["id"] == "compile-oom-killed"
    assert doc["reports"][0]["findings"][0]["remedy"] == "retry-half-jobs"
    assert doc["reports"][1]["findings"][0]["id"] == "no-space-left"
    assert doc["exit_code"] == 1


def test_a_reader_that_goes_away_ends_the_report_without_a_traceback(tmp_path):
    # `inv diagnose --log x | head -1`: the pipe is closed before the report is written; the command stops quietly
    # with the shell's SIGPIPE status instead of printing BrokenPipeError's traceback
    a = write(tmp_path, "a.log", f"{OOM}\n")
    r, w = os.pipe()
    os.close(r)
    e = dict(os.environ, COLUMNS="200")
    e.pop("OCRDEPLOY_INVENTORY", None)
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "diagnose", "--log", a], stdout=w, stderr=subprocess.PIPE,
                       text=True, cwd=ROOT, env=e, timeout=120)
    os.close(w)
    assert p.returncode == 141 and "Traceback" not in p.stderr and "BrokenPipeError" not in p.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("fmt", [[], ["--json"]])
def test_output_to_a_full_disk_is_one_line_and_its_own_status(tmp_path, fmt):
    # `inv diagnose --json > /dev/full`: the report cannot be written; no traceback, and not 1 ("a known error",
    # which the log does hold) nor 0: a script must not read a verdict from a report that was never written
    a = write(tmp_path, "a.log", f"{OOM}\n")
    e = dict(os.environ, COLUMNS="200")
    e.pop("OCRDEPLOY_INVENTORY", None)
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "ocrdeploy", "diagnose", "--log", a, *fmt], stdout=full,
                           stderr=subprocess.PIPE, text=True, cwd=ROOT, env=e, timeout=120)
    assert p.returncode == 74, p.stderr
    assert "Traceback" not in p.stderr
    assert p.stderr.strip() == "ocrdeploy: could not write the output: No space left on device"


@pytest.mark.parametrize("args,needle", [
    (["--log", "/nonexistent.log"], "/nonexistent.log: no such file"),
    ([], "nothing to scan"),
    (["--log", "x.log", "--context", "99"], "--context must be between 0 and 20"),
])
def test_input_errors_exit_2(args, needle, tmp_path):
    p = run(args, cwd=tmp_path)
    assert p.returncode == 2 and needle in (p.stderr + p.stdout) and "Traceback" not in p.stderr


def test_user_rules_file(tmp_path):
    rules = write(tmp_path, "mine.yaml", yaml.safe_dump([{
        "id": "site-quota", "stage": "install", "patterns": ["Disk quota exceeded on /scratch"],
        "cause": "The scratch quota is full.", "fix": "Clean {workdir}/runs."}]))
    log = write(tmp_path, "q.log", "rsync: write failed: Disk quota exceeded on /scratch (122)\n")
    p = run(["--log", log, "--rules", rules])
    assert p.returncode == 1 and "site-quota" in p.stdout and "Clean ~/ocrdeploy/runs." in p.stdout


@pytest.mark.parametrize("entry,needle", [
    ({"id": "x", "stage": "install", "patterns": ["(unclosed"], "cause": "c", "fix": "f"}, "bad regex"),
    ({"id": "x", "stage": "boot", "patterns": ["abc"], "cause": "c", "fix": "f"}, "stage 'boot'"),
    ({"id": "x", "stage": "install", "patterns": [".*"], "cause": "c", "fix": "f"}, "add 'literals:'"),
    ({"id": "x", "stage": "install", "patterns": ["abc"], "cause": "c"}, "lacks 'fix'"),
    ({"id": "cuda-oom", "stage": "install", "patterns": ["abc"], "cause": "c", "fix": "f"}, "defined twice"),
    ({"id": "x", "stage": "install", "patterns": ["abc"], "cause": "c", "fix": "f", "remedy": "reboot"},
     "unknown remedy"),
])
def test_bad_rules_file_is_an_input_error_naming_the_line(tmp_path, entry, needle):
    rules = write(tmp_path, "bad.yaml", "# my rules\n" + yaml.safe_dump([entry]))
    log = write(tmp_path, "l.log", "x\n")
    p = run(["--log", log, "--rules", rules])
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr
    assert f"{rules}:" in p.stderr


@pytest.mark.ssh
def test_a_remote_scan_with_a_table_far_over_one_argument_s_limit(lab, tmp_path):
    """Over SSH the whole command reaches the host's shell as one argument, which Linux caps at 128 KiB: the scanner
    and the table go on stdin, so a site's own rules file can make the table as large as it likes."""
    h = lab.start("diagbig", "127.0.0.8")
    entries = [{"id": f"site-{i:03d}", "stage": "install", "patterns": [f"site failure {i:03d} " + "x" * 900],
                "literals": [f"site failure {i:03d} "], "cause": "c", "fix": "f"} for i in range(300)]
    rules = write(tmp_path, "big.yaml", yaml.safe_dump(entries))
    assert Path(rules).stat().st_size > 2 * 128 * 1024
    remote_log = write(tmp_path, "remote.log", "INFO ok\n" * 100 + "ERROR site failure 299 " + "x" * 900 + "\n")
    inv = write(tmp_path, "inv.yml", yaml.safe_dump({"all": {"hosts": {
        "gpu": lab.inventory_entry(h, workdir=str(tmp_path / "wd"))}}}))
    env = {"OCRDEPLOY_KNOWN_HOSTS": str(lab.known_hosts), "OCRDEPLOY_INVENTORY": inv}
    p = run(["--host", "gpu", "--log", str(remote_log), "--rules", rules, "--json"], env=env)
    assert p.returncode == 1, p.stderr
    f = json.loads(p.stdout)["reports"][0]["findings"][0]
    assert (f["id"], f["first_line"]) == ("site-299", 101)


def make_cu13(root: Path) -> Path:
    """A prefix laid out like the real nvidia-cuda-* 13.x wheels (one nvidia/cu13/ tree: bin/, include/,
    lib/ with versioned sonames only, no lib64/; nvvm/bin/cicc shipped by nvidia-nvvm)."""
    cu = root / "vllm-ocr-env" / "lib" / "python3.13" / "site-packages" / "nvidia" / "cu13"
    for d in ("bin/crt", "include", "lib", "nvvm/bin"):
        (cu / d).mkdir(parents=True)
    for f in ("bin/nvcc", "bin/ptxas", "nvvm/bin/cicc", "lib/libcudart.so.13", "lib/libnvrtc.so.13"):
        (cu / f).write_text("binary")
    return cu


def test_fix_relinks_cuda_after_printing_the_plan(tmp_path):
    cu = make_cu13(tmp_path)
    libcuda = tmp_path / "libcuda.so.1"
    libcuda.write_text("driver")
    inv = write(tmp_path, "inv.yml", yaml.safe_dump({"all": {"vars": {"workdir": str(tmp_path), "cu13": str(cu)}}}))
    log = write(tmp_path, "build.log", "/usr/bin/ld: cannot find -lcudart\nCUDA_nvrtc_LIBRARY-NOTFOUND\n")
    # without --yes and without a terminal: the plan is printed, nothing runs
    p = run(["--log", log, "--inventory", inv, "--fix"])
    assert "will run: sh -c" in p.stdout and "not run" in p.stdout
    assert not (cu / "lib64").exists()
    p = run(["--log", log, "--inventory", inv, "--fix", "--yes"])
    assert p.returncode == 1  # the log still shows the errors; the fix itself succeeded
    assert "ok: sh -c" in p.stdout and p.stdout.count("will run") == 1  # both findings share one remedy
    assert os.readlink(cu / "lib64") == "lib"
    assert os.readlink(cu / "lib" / "libcudart.so") == str(cu / "lib" / "libcudart.so.13")
    assert os.readlink(cu / "lib" / "libnvrtc.so") == str(cu / "lib" / "libnvrtc.so.13")
    assert (cu / "nvvm" / "bin" / "cicc").read_text() == "binary"  # the real cicc is never replaced
    assert (cu / "lib64" / "stubs" / "libcuda.so").is_symlink()


def test_fix_reinstalls_feat_ocr_transformers_in_a_real_venv(tmp_path):
    """The ordering rule's remedy: an editable `transformers` 5.19.0.dev0 re-installed with --no-deps."""
    src = tmp_path / "transformers-src"
    (src / "transformers").mkdir(parents=True)
    (src / "transformers" / "__init__.py").write_text('__version__ = "5.19.0.dev0"\n')
    (src / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools>=61"]\n'
                                        'build-backend = "setuptools.build_meta"\n'
                                        '[project]\nname = "transformers"\nversion = "5.19.0.dev0"\n')
    venv = tmp_path / "vllm-ocr-env"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    inv = write(tmp_path, "inv.yml", yaml.safe_dump({"all": {"vars": {
        "workdir": str(tmp_path), "transformers_src": str(src)}}}))
    log = write(tmp_path, "pip.log", "Successfully installed safetensors-0.6.2 transformers-5.19.0\n")
    p = run(["--log", log, "--inventory", inv, "--fix", "--yes"])
    assert "transformers-overwritten" in p.stdout and f"ok: {venv}/bin/pip install --no-deps -e {src}" in p.stdout, \
        p.stdout + p.stderr
    out = subprocess.run([str(venv / "bin" / "python"), "-c", "import transformers; print(transformers.__version__)"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip() == "5.19.0.dev0"


@pytest.mark.ssh
def test_scan_on_a_remote_host_brings_back_only_findings(lab, tmp_path):
    h = lab.start("diag", "127.0.0.7")
    remote_log = tmp_path / "remote-vllm.log"
    remote_log.write_text("INFO\n" * 5000 + "RuntimeError: TopKMaskLogits failed with error code device kernel "
                                            "image is invalid\n")
    state = tmp_path / "wd" / ".ocrdeploy" / "services"
    state.mkdir(parents=True)
    (state / "minicpm-ocr-18499.json").write_text(json.dumps({"log": str(remote_log), "pid": 1}))
    inv = write(tmp_path, "inv.yml", yaml.safe_dump({"all": {"hosts": {
        "gpu": lab.inventory_entry(h, workdir=str(tmp_path / "wd"))}}}))
    env = {"OCRDEPLOY_KNOWN_HOSTS": str(lab.known_hosts), "OCRDEPLOY_INVENTORY": inv}
    p = run(["--host", "gpu", "--log", str(remote_log), "--json"], env=env)
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    f = doc["reports"][0]["findings"][0]
    assert (f["id"], f["first_line"]) == ("topk-kernel-image-invalid", 5001)
    assert len(p.stdout) < 10_000  # the 5000-line log did not travel
    p = run(["--host", "gpu", "--service"], env=env)
    assert p.returncode == 1 and "topk-kernel-image-invalid" in p.stdout
    p = run(["--host", "gpu", "--log", "/no/such/remote.log"], env=env)
    assert p.returncode == 2 and "no such file" in p.stdout + p.stderr


def test_service_without_state_is_an_input_error(tmp_path):
    inv = write(tmp_path, "inv.yml", yaml.safe_dump({"all": {"vars": {"workdir": str(tmp_path)}}}))
    p = run(["--service", "--inventory", inv])
    assert p.returncode == 2 and "nothing started by `inv serve`" in p.stdout + p.stderr


def test_service_fixes_name_each_services_own_port(tmp_path):
    """`inv diagnose --service` over two instances (the second on --port + 1) and a record with no port: a fix
    that names the port names the port of the service whose log it read, and the host's default only where the
    record gives none.  (Found in CI: the failed second instance of `serve --instances 2 --port 33031` was told
    to look at `ss -ltnp 'sport = :18499'`.)"""
    state = tmp_path / ".ocrdeploy" / "services"
    state.mkdir(parents=True)
    bind = "    sock.bind(addr)\nOSError: [Errno 98] Address already in use\n"
    for name, port in (("minicpm-ocr-33031", 33031), ("minicpm-ocr-33032", 33032), ("old", None)):
        log = tmp_path / f"{name}.log"
        log.write_text("INFO: starting\n" + bind)
        rec = {"log": str(log), "pid": 1, **({"port": port} if port else {})}
        (state / f"{name}.json").write_text(json.dumps(rec))
    inv = write(tmp_path, "inv.yml", yaml.safe_dump({"all": {"vars": {"workdir": str(tmp_path), "port": 18600}}}))
    p = run(["--service", "--inventory", inv, "--json"])
    assert p.returncode == 1, p.stderr
    fixes = {Path(r["file"]).stem: r["findings"][0]["fix"] for r in json.loads(p.stdout)["reports"]}
    assert [f.split("sport = :")[1][:5] for f in (fixes["minicpm-ocr-33031"], fixes["minicpm-ocr-33032"],
                                                   fixes["old"])] == ["33031", "33032", "18600"], fixes
