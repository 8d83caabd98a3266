"""(round st54) two widenings of start entries, each held by real corpus logs of its own:

- host-oom-killed: a worker the kernel killed, told by its parent in the parent's own words, SIGKILL only: billiard's
  (celery's pool) WorkerLostError and MainProcess line (pattern 26), TGI's launcher for a shard or the download step
  (pattern 27), torch's and Paddle's DataLoader watchdog (pattern 28). The same reports for other signals (SIGTERM, a
  segmentation fault, a bus error, TGI's signal 4/6/7) stay out, and so does fish's job report of a SIGKILL (macOS's
  code-signing kill reads the same, oven-sh/bun#22608), as zsh's bare "zsh: killed" does.
- torch-windows-dll-load-failed: PaddlePaddle's own extension (libpaddle, core_avx) in Python's loader words on Windows
  (pattern 9); the same import failing on Linux (libpaddle.so) stays out.
"""

import functools

import pytest

import corpus

SCAN = corpus.Scanner()
CORPUS = corpus.load()

_log = functools.partial(corpus.case_log, CORPUS)
_found = SCAN.findings

SIGKILL = [("celery/billiard/issues/380", 26), ("mtalcott/google-photos-deduper/issues/58", 26),
           ("huggingface/text-generation-inference/issues/1256", 27), ("hezhangsprinter/DCPDN/issues/12", 28),
           ("PaddlePaddle/PaddleOCR/issues/3624", 28), ("PaddlePaddle/Paddle/issues/55315", 28)]
PADDLE_DLL = ["PaddlePaddle/Paddle/issues/69236", "YaoFANGUK/video-subtitle-remover/issues/112",
              "PaddlePaddle/Paddle/issues/59329", "baidu/lac/issues/185"]
# the same parents' reports for other signals (the corpus's unrecognised items, and TGI's launcher lines of held-out
# batches 25, 40 and 86 for signals 4, 7 and 6, quoted): crashes and shutdowns, not the OOM killer
OTHER_SIGNALS = [
    "WorkerLostError: Worker exited prematurely: signal 15 (SIGTERM) Job: 11.",
    "RuntimeError: DataLoader worker (pid 25902) is killed by signal: Segmentation fault",
    "RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error.",
    "fish: Job 1, 'vim' terminated by signal SIGSEGV (Address boundary error)",
    "`fish: Job 1, 'bun --revision' terminated by signal SIGKILL (Forced quit)`",
    "2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown "
    "with signal 4 rank=0",
    "Error: Download process was signaled to shutdown with signal 7",
    "2024-10-01T07:43:22.342900Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown "
    "with signal 6 rank=0",
]


def _unnamed(thread):
    return next(i["log"] for i in CORPUS["unrecognised"] if thread in i["source"])


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread,pattern", SIGKILL)
def test_a_worker_killed_by_sigkill_is_host_oom_killed(engine, thread, pattern):
    assert pattern in SCAN.alone(_log("host-oom-killed", thread), engine, "host-oom-killed")


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("line", OTHER_SIGNALS)
def test_other_signals_and_fishs_report_are_not_host_oom_killed(engine, line):
    assert "host-oom-killed" not in _found(line, engine)


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread", PADDLE_DLL)
def test_paddles_own_extension_failing_to_load_on_windows_is_the_dll_entry(engine, thread):
    assert 9 in SCAN.alone(_log("torch-windows-dll-load-failed", thread), engine, "torch-windows-dll-load-failed")


@pytest.mark.parametrize("engine", corpus.ENGINES)
def test_paddles_core_failing_on_linux_is_not_the_windows_dll_entry(engine):
    log = _unnamed("PaddlePaddle/Paddle/issues/52383")
    assert "torch-windows-dll-load-failed" not in _found(log, engine)
    # the Linux loader's own line naming the missing library, under the same paddle import, stays libcudart-missing's
    linux = log + "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
    assert "torch-windows-dll-load-failed" not in _found(linux, engine)
