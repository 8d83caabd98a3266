"""The diagnose engine at its edges: a remote scan whose host answers something else than a scan report, the
context lines asked of a remote scan, and the {placeholders} filled from a host's inventory vars."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ocrdeploy.diagnose import scanner
from ocrdeploy.diagnose.engine import SCAN_LOADER, fix_context
from ocrdeploy.inventory import load_inventory

ROOT = Path(__file__).parents[2]
LOG = "INFO a\nINFO b\nINFO c\nRuntimeError: TopKMaskLogits failed with error code device kernel image is invalid\n" \
      "INFO d\nINFO e\nINFO f\n"


def diagnose(args, env):
    e = dict(os.environ, COLUMNS="200", **env)
    return subprocess.run([sys.executable, "-m", "ocrdeploy", "diagnose", *args], capture_output=True, text=True,
                          cwd=ROOT, env=e, timeout=120)


@pytest.fixture
def remote(lab, tmp_path):
    """A host of the SSH lab whose ansible_python_interpreter is a script: the real python3 for everything but
    the log scanner, which gets what the test writes to `answer` (sh run in the scanner's place)."""
    h = lab.start("diag", "127.0.0.7")
    answer = tmp_path / "answer.sh"
    python = tmp_path / "python"
    # the scanner's command is `python -c SCAN_LOADER -` (the scanner itself comes on stdin): told apart by the
    # loader's own file name for the scanner
    assert "ocrdeploy-scanner" in SCAN_LOADER
    python.write_text(f'#!/bin/sh\ncase "$2" in *ocrdeploy-scanner*) . "{answer}";; esac\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    log = tmp_path / "remote.log"
    log.write_text(LOG)
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"gpu": lab.inventory_entry(
        h, workdir=str(tmp_path / "wd"), ansible_python_interpreter=str(python))}}}))
    env = {"OCRDEPLOY_KNOWN_HOSTS": str(lab.known_hosts), "OCRDEPLOY_INVENTORY": str(inv)}
    return answer, log, env


def test_a_remote_scan_gets_the_context_asked_for(remote):
    answer, log, env = remote
    answer.write_text("")                                          # the real scanner
    for n in (0, 3):
        p = diagnose(["--host", "gpu", "--log", str(log), "--json", "--context", str(n)], env)
        assert p.returncode == 1, p.stderr
        f = json.loads(p.stdout)["reports"][0]["findings"][0]
        assert f["id"] == "topk-kernel-image-invalid" and f["first_line"] == 4
        assert len(json.dumps(f).split("INFO ")) - 1 == 2 * n, f      # n lines before and n after


def test_a_remote_scan_that_fails_says_so_with_the_last_three_lines(remote):
    answer, log, env = remote
    answer.write_text("echo partial output\nfor i in 1 2 3 4; do echo \"line $i\" >&2; done\nexit 3\n")
    p = diagnose(["--host", "gpu", "--log", str(log)], env)
    assert p.returncode == 1
    assert "remote scan failed (exit code 3): line 2 | line 3 | line 4" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("text", [scanner.MARKER, scanner.MARKER + " {not json"], ids=["marker alone", "not json"])
def test_a_remote_answer_that_is_not_a_scan_report_says_so(remote, text):
    answer, log, env = remote
    answer.write_text(f"echo '{text}'\nexit 0\n")
    p = diagnose(["--host", "gpu", "--log", str(log)], env)
    assert p.returncode == 1
    assert "remote scan answered something that is not a scan report" in p.stderr and "Traceback" not in p.stderr


def test_stdin_is_refused_for_a_remote_scan(remote):
    answer, log, env = remote
    answer.write_text("")
    p = diagnose(["--host", "gpu", "--log", "-"], env)
    assert p.returncode == 2 and "--log - (stdin) only works for a local scan, not with --host" in p.stdout + p.stderr


def host(tmp_path, **vars_):
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"gpu": vars_}}}))
    return load_inventory(inv).hosts["gpu"]


def test_every_placeholder_comes_from_the_hosts_vars_where_set(tmp_path):
    given = {"workdir": "/w", "vllm_env": "/e/vllm", "sdk_env": "/e/sdk", "tf_env": "/e/tf", "cu13": "/c/cu13",
             "port": 18600, "transformers_src": "/s/tf", "vllm_src": "/s/vllm", "deps_dir": "/d/deps"}
    ctx = fix_context(host(tmp_path, **given))
    assert ctx == {k: str(v) for k, v in given.items()}


def test_unset_placeholders_follow_the_ones_they_derive_from(tmp_path):
    ctx = fix_context(host(tmp_path, workdir="/w", vllm_env="/e/vllm", vllm_src="/s/vllm"))
    assert ctx == {"workdir": "/w", "vllm_env": "/e/vllm", "sdk_env": "/w/sdk-env", "tf_env": "/w/tf-ocr-env",
                   "cu13": "/e/vllm/lib/python3.13/site-packages/nvidia/cu13", "port": "18499",
                   "vllm_src": "/s/vllm", "deps_dir": "/s/vllm/.deps"}


@pytest.mark.parametrize("home,given,made", [
    ("/home/u", {"workdir": "~/ocrdeploy", "vllm_env": "~", "port": "18499"},
     {"workdir": "/home/u/ocrdeploy", "vllm_env": "/home/u", "port": "18499"}),
    ("/home/u/", {"workdir": "~/ocrdeploy"}, {"workdir": "/home/u/ocrdeploy"}),
    ("/", {"workdir": "~/ocrdeploy", "vllm_env": "~"}, {"workdir": "/ocrdeploy", "vllm_env": "/"}),
    ("/home/u", {"workdir": "~other/ocr", "tf_env": "/abs/~/x"}, {"workdir": "~other/ocr", "tf_env": "/abs/~/x"}),
    ("relative/home", {"workdir": "~/ocrdeploy"}, {"workdir": "~/ocrdeploy"}),
    ("", {"workdir": "~/ocrdeploy"}, {"workdir": "~/ocrdeploy"}),
], ids=["home", "home with a slash", "root's home /", "another user's ~ and a ~ inside", "a relative home",
        "no home"])
def test_with_home_makes_only_this_users_tilde_absolute(home, given, made):
    from ocrdeploy.diagnose.engine import with_home

    assert with_home(given, home) == made


def test_a_line_of_words_every_failure_shares_looks_like_no_entry():
    """"error", "failed", "build", "command" are in hundreds of lines: sharing them is no lead."""
    from ocrdeploy.diagnose.engine import looks_like
    from ocrdeploy.diagnose.table import load_table

    rules = load_table()
    assert looks_like("ERROR: the build failed: command exited with status 1 while installing requirements",
                      rules) == []
    assert looks_like("ERROR: no kernel image is available for execution on the device", rules) != []


def table(*entries):
    from ocrdeploy.diagnose.table import parse_rules

    return parse_rules([{"stage": "start", "cause": "c", "fix": "f", **e} for e in entries], "t.yaml", "t.yaml")


NEAR = table(
    # a word spelt only by the literals (the pattern's alternation splits it)
    {"id": "cuda-libs", "patterns": [r"libcu(?:dart|blas)\.so\.13"], "literals": ["libcudart.so.13", "libcublas.so.13"]},
    # a word spelt only by the pattern, behind a \b (the literal is a part of it)
    {"id": "illegal-address", "patterns": [r"\bcudaErrorIllegalAddress\b"], "literals": ["illegal"]},
    # an exit status: three digits are a key token
    {"id": "oom-killed", "patterns": [r"exited with status 137"]},
    # three entries share flashinfer: alone it points at none of them
    {"id": "fi-one", "patterns": ["flashinfer sampler crashed"]},
    {"id": "fi-two", "patterns": ["flashinfer cubin mismatch"]},
    {"id": "fi-three", "patterns": ["flashinfer jit cache stale"]},
    # three letters are too short to be a key token
    {"id": "gpu-oom", "patterns": ["gpu oom at startup"]},
    # (round scan10) a word spelt only by the entry's name: its patterns word the failure otherwise
    {"id": "device-busy", "patterns": ["occupied by other processes"]},
)


@pytest.mark.parametrize("line,near", [
    ("ImportError: libcudart.so.13: cannot open shared object file", ["cuda-libs"]),
    # (round scan14: the enum's parts are words too, its "cuda" cuda-libs' name word, a weaker second)
    ("RuntimeError: got cudaErrorIllegalAddress in a kernel", ["illegal-address", "cuda-libs"]),
    ("the worker went away, 137", ["oom-killed"]),
    ("flashinfer went wrong", []),
    ("flashinfer sampler went wrong", ["fi-one"]),
    ("gpu oom", []),
    ("all devices are busy or unavailable", ["device-busy"]),
], ids=["literal word", "pattern word", "exit status", "a word three share", "a rarer word", "short words", "the entry's name"])
def test_looks_like_weighs_the_key_tokens(line, near):
    from ocrdeploy.diagnose.engine import looks_like

    assert looks_like(line, NEAR) == near


def test_looks_like_ranks_by_weight_and_keeps_three():
    from ocrdeploy.diagnose.engine import looks_like

    # fi-two shares cubin and mismatch (1 each) and flashinfer (1/3 each); fi-one sampler, fi-three stale, with
    # flashinfer; gpu-oom startup alone (1)
    line = "flashinfer sampler cubin mismatch stale at startup"
    assert looks_like(line, NEAR, limit=10) == ["fi-two", "fi-one", "fi-three", "gpu-oom"]
    assert looks_like(line, NEAR) == ["fi-two", "fi-one", "fi-three"]


def test_two_shared_tokens_are_a_lead_even_when_each_is_common():
    from ocrdeploy.diagnose.engine import looks_like

    rules = table(*({"id": f"tri-{n}", "patterns": [f"triton autotuner {n} failed"]} for n in ("alpha", "bravo", "delta")))
    assert looks_like("triton autotuner gave up", rules) == ["tri-alpha", "tri-bravo", "tri-delta"]
    assert looks_like("triton gave up", rules) == []


def test_an_unrecognised_error_is_never_said_to_look_like_a_harmless_entry(tmp_path):
    from ocrdeploy.diagnose.engine import annotate, fix_context, scan_local

    rules = table({"id": "sampler-notice", "severity": "harmless", "patterns": ["flashinfer sampler fallback notice"]},
                  {"id": "sampler-crash", "patterns": ["flashinfer sampler kernel crashed"]})
    log = tmp_path / "start.log"
    log.write_text("INFO up\nRuntimeError: flashinfer sampler fallback exploded\n")
    (rep,) = annotate(scan_local([str(log)], rules), rules, fix_context())
    (u,) = rep["unrecognised"]
    assert u["looks_like"] == ["sampler-crash"]


def local_host(tmp_path):
    from ocrdeploy.inventory.model import Host
    from ocrdeploy.provision.connection import LocalConnection

    host = Host("localhost", vars={"workdir": str(tmp_path / "wd")})
    return LocalConnection(host), host


def test_a_failed_steps_findings_are_every_finding_of_the_table_given(tmp_path):
    """log_findings (the failed step's report): warnings too, from the rules the caller passes."""
    from ocrdeploy.diagnose.engine import log_findings

    rules = table({"id": "slow-disk", "severity": "warning", "patterns": ["disk is slow today"]},
                  {"id": "disk-full", "patterns": ["no space left on the scratch disk"]})
    log = tmp_path / "step.log"
    log.write_text("INFO start\nWARNING disk is slow today\nOSError: no space left on the scratch disk\n")
    conn, host = local_host(tmp_path)
    found = log_findings(conn, host, str(log), rules)
    assert sorted(f["id"] for f in found) == ["disk-full", "slow-disk"]
    assert {f["cause"] for f in found} == {"c"}


def test_a_remote_scan_that_fails_gives_a_failed_step_no_findings(remote, monkeypatch):
    """The step's tail is shown either way: a scan that fails on the host is no finding, not an error."""
    from ocrdeploy.diagnose.engine import log_findings
    from ocrdeploy.provision.connection import connect

    answer, log, env = remote
    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", env["OCRDEPLOY_KNOWN_HOSTS"])
    host = load_inventory(Path(env["OCRDEPLOY_INVENTORY"])).hosts["gpu"]
    conn = connect(host, connect_timeout=10)
    try:
        answer.write_text("")
        assert [f["id"] for f in log_findings(conn, host, str(log))] == ["topk-kernel-image-invalid"]
        answer.write_text("echo boom >&2\nexit 3\n")
        assert log_findings(conn, host, str(log)) == []
    finally:
        conn.close()


def test_the_shipped_lead_words_are_the_corpus_ones():
    """(round scan12) ocrdeploy/diagnose/lead_words.json is what bench/build_lead_words.py makes of the corpus today:
    a case added or an entry renamed without rebuilding it fails here."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("build_lead_words", root / "bench" / "build_lead_words.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.TABLE.read_text(encoding="utf-8") == mod.dump(mod.build()), "run python bench/build_lead_words.py"


def test_looks_like_weighs_the_words_of_an_entrys_real_cases():
    """(round scan12) a word most of an entry's real logs hold (the tool of its runs) weighs more than a pattern
    word another entry spells once: the lead names the entry whose runs look like the line."""
    from ocrdeploy.diagnose.engine import lead_index, looks_like

    rules = table({"id": "runner-timeout", "patterns": ["llama runner did not come up"]},
                  {"id": "model-too-big", "patterns": ["model does not fit in memory"]},
                  {"id": "load-slow", "patterns": ["progress stalled while loading"]})
    line = "timed out waiting for llama runner to start - progress 0.00 -"
    # without case words: "llama" and "runner" (1 each) lead runner-timeout, "progress" (1) load-slow
    assert looks_like(line, rules, index=lead_index(rules, {})) == ["runner-timeout", "load-slow"]
    # load-slow's real runs all say "timed out waiting" (CASE_WEIGHT x 1.0 each): it leads now, a pattern word of its
    # own beside it; some of model-too-big's runs say "waiting" (4 x 0.4, shared by two entries: 1.6 / 2 ** 0.6, 1.06)
    words = {"load-slow": {"timed": 1.0, "waiting": 1.0}, "model-too-big": {"waiting": 0.4}}
    assert looks_like(line, rules, index=lead_index(rules, words)) == ["load-slow", "runner-timeout", "model-too-big"]
    # the weight is the share of the cases: a word one case in ten holds is weaker than a pattern word
    assert looks_like(line, rules, index=lead_index(rules, {"load-slow": {"timed": 0.1}}))[0] == "runner-timeout"
    # and a word few of an entry's runs hold is no lead on its own (4 x 0.2 over two entries: 0.53, under LEAD_MIN)
    few = {"load-slow": {"timed": 1.0, "waiting": 1.0}, "model-too-big": {"waiting": 0.2}}
    assert looks_like(line, rules, index=lead_index(rules, few)) == ["load-slow", "runner-timeout"]


def test_tokens_a_few_entries_share_outweigh_one_token_of_one_entry():
    """(round scan13) weight / df ** DF_POWER: two words three entries share say more than one word of one entry (at a
    power of 1 the lone word led: 2/3 < 1)."""
    from ocrdeploy.diagnose.engine import looks_like

    rules = table({"id": "a-launch-stall", "patterns": ["ptxjit launcher stalled"]},
                  {"id": "b-launch-hang", "patterns": ["ptxjit launcher hung"]},
                  {"id": "c-launch-slow", "patterns": ["ptxjit launcher slowed"]},
                  {"id": "zeppelin-crash", "patterns": ["zeppelin crashed"]})
    near = looks_like("ptxjit launcher zeppelin", rules, limit=4)
    assert near == ["a-launch-stall", "b-launch-hang", "c-launch-slow", "zeppelin-crash"]


def test_the_lines_around_weigh_less_than_the_unrecognised_line_itself():
    """(round scan13) CONTEXT_WEIGHT: a word of the unrecognised line leads over the same weight of a word of the
    lines shown around it (at an equal weight the tie went to the entry first by name, the context's)."""
    from ocrdeploy.diagnose.engine import unrecognised_lead

    rules = table({"id": "a-context-entry", "patterns": ["quokkaloader"]},
                  {"id": "b-line-entry", "patterns": ["wombatsolver"]})
    u = {"text": "RuntimeError: wombatsolver gave up", "context": [[1, "INFO quokkaloader ready"],
                                                                    [2, "RuntimeError: wombatsolver gave up"]]}
    assert unrecognised_lead(u, rules) == ["b-line-entry", "a-context-entry"]


def test_a_camelcase_identifier_gives_its_words_to_the_lead():
    """(round scan14) the parts of a CamelCase name (an exception class, an error enum) are words of the line: a line
    whose only telling words are inside one ("QuokkaLoaderStalledException") leads to the entry that spells them
    apart, and the part's weight is the word's (no part: no lead; a lowercase run of letters is not split)."""
    from ocrdeploy.diagnose.engine import _words, looks_like

    assert {"quokka", "loader", "stalled"} <= _words("QuokkaLoaderStalledException: gave up")
    assert {"symbol"} <= _words("cudaErrorSymbolNotFound")
    assert "loader" not in _words("quokkaloaderstalled gave up")
    rules = table({"id": "a-wombat-entry", "patterns": ["wombat solver diverged"]},
                  {"id": "b-quokka-entry", "patterns": ["quokka loader stalled"]})
    assert looks_like("QuokkaLoaderStalledException: gave up", rules) == ["b-quokka-entry"]
    assert looks_like("quokkaloaderstalled gave up", rules) == []


def test_an_identifier_joined_by_underscores_or_hyphens_gives_its_words_to_the_lead():
    """(round scan15) the parts of an UPPER_SNAKE, snake_case or hyphen-joined identifier ("CMAKE_C_COMPILER",
    "QUOKKA_LOADER_STALLED", "wombat-solver-diverged") are words of the line as a CamelCase name's are: a line whose only
    telling words are inside one leads to the entry that spells them apart, each part weighing as the word itself; a
    number is no part, and a run of letters with no separator is not split."""
    from ocrdeploy.diagnose.engine import _words, looks_like

    assert {"cmake", "compiler", "cmake_c_compiler"} <= _words("CMake Error: CMAKE_C_COMPILER not set")
    assert {"llama", "cpp", "llama-cpp-python"} <= _words("Failed building wheel for llama-cpp-python")
    assert "121" not in _words("torch-2.5.1-cu121-121") and "cu121" in _words("torch-2.5.1-cu121")
    assert "loader" not in _words("quokkaloaderstalled gave up")
    rules = table({"id": "a-wombat-entry", "patterns": ["wombat solver diverged"]},
                  {"id": "b-quokka-entry", "patterns": ["quokka loader stalled"]})
    assert looks_like("status QUOKKA_LOADER_STALLED: gave up", rules) == ["b-quokka-entry"]
    assert looks_like("status wombat-solver-diverged, gave up", rules) == ["a-wombat-entry"]
    # two parts of one entry outweigh one of the other: the parts weigh as the words do
    assert looks_like("QUOKKA_LOADER wombat", rules) == ["b-quokka-entry", "a-wombat-entry"]
    assert looks_like("quokkaloaderstalled gave up", rules) == []
