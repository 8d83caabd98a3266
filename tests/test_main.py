"""The program's exit (ocrdeploy/__main__.py end()): the exit handlers run and the output is flushed, then the
process ends without the interpreter's module teardown; the status is the one SystemExit would give, and with another
thread alive the interpreter's own exit (which joins it) is kept."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def child(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)


@pytest.mark.parametrize("value", ['"boom"', "3", "None", "True", "0", "256 + 7", "-1"])
def test_the_status_is_the_one_system_exit_gives(value):
    ours = child(f"import ocrdeploy.__main__ as m\ntry:\n    raise SystemExit({value})\n"
                 f"except SystemExit as e:\n    m.end(e.code)\nprint('not reached')")
    theirs = child(f"raise SystemExit({value})")
    assert (ours.returncode, ours.stdout, ours.stderr) == (theirs.returncode, theirs.stdout, theirs.stderr)


def test_exit_handlers_run_and_the_output_is_flushed():
    p = child("import atexit, sys, ocrdeploy.__main__ as m\n"
              "atexit.register(lambda: sys.stdout.write('handler ran\\n'))\n"
              "sys.stdout.write('x' * 200000)\nsys.stderr.write('partial line on stderr')\n"
              "import weakref, tempfile, os\nd = tempfile.TemporaryDirectory()\nprint(d.name, file=sys.stderr)\n"
              "m.end(0)")
    assert p.returncode == 0 and p.stdout == "x" * 200000 + "handler ran\n"
    assert p.stderr.startswith("partial line on stderr")
    assert not Path(p.stderr.split()[-1]).exists()          # weakref.finalize's atexit cleanup ran


def test_the_teardown_is_skipped():
    """An object whose __del__ would run at the interpreter's teardown is never collected: the process was gone."""
    p = child("import sys, ocrdeploy.__main__ as m\n"
              "class Late:\n    def __del__(self):\n        sys.stderr.write('teardown ran\\n')\n"
              "keep = Late()\nm.end(0)")
    assert (p.returncode, p.stderr) == (0, "")


def test_with_another_thread_alive_the_interpreters_exit_is_kept():
    p = child("import threading, time, sys, ocrdeploy.__main__ as m\n"
              "t = threading.Thread(target=lambda: (time.sleep(0.3), print('thread finished')))\nt.start()\n"
              "m.end(0)\nprint('end returned')\nsys.exit(4)")
    assert p.returncode == 4 and p.stdout.splitlines() == ["end returned", "thread finished"]


def test_a_closed_pipe_still_exits_non_zero_and_quietly(tmp_path):
    """`ocrdeploy ... | head -c1`: the reader is gone before the flush, as the interpreter's own exit says 120."""
    code = ("import sys, os, ocrdeploy.__main__ as m\nr, w = os.pipe()\nos.close(r)\n"
            "sys.stdout = os.fdopen(w, 'w')\nsys.stdout.write('x' * 10)\nm.end(0)")
    p = child("import signal; signal.signal(signal.SIGPIPE, signal.SIG_IGN)\n" + code)
    assert p.returncode == 120
