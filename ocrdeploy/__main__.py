"""`python -m ocrdeploy` and the `ocrdeploy` command.

An `install` over SSH starts its facts probe's ssh before invoke, the tasks and the recipes are imported
(commands/early_install.py, provision/early_probe.py): the handshake runs while the controller starts.  When the
command is done, the exit handlers run and the output is flushed, then the process ends without the interpreter's
teardown of every module (a no-op's last 30-40 ms, after its answer is out), as the facts probe does on the host."""

import errno
import sys


def run():
    from .commands import early_install

    early_install.start(sys.argv[1:])
    from .cli import main

    try:
        main()
    except SystemExit as exc:
        end(exc.code)
        raise
    except BrokenPipeError:
        # the reader of our output went away (`inv diagnose --log x | head`): nothing more to say, and no traceback;
        # exit as a shell reports a writer ended by SIGPIPE (128 + 13)
        _quiet_stdout()
        end(141)
        sys.exit(141)
    except OSError as exc:
        if exc.errno not in _OUTPUT_FULL:
            raise
        # the output went to a full disk or a broken device (`inv diagnose --json > /dev/full`): one line instead of a
        # traceback, and a status of its own, so a script never reads 1 ("a known error") or 0 from a report that
        # was never written
        _quiet_stdout()
        try:
            what = exc.filename or "the output"
            sys.stderr.write(f"ocrdeploy: could not write {what}: {exc.strerror or exc}\n")
            sys.stderr.flush()
        except OSError:
            pass
        end(EXIT_OUTPUT_FAILED)
        sys.exit(EXIT_OUTPUT_FAILED)
    end(0)


# sysexits.h's EX_IOERR: an error while doing I/O on a file, here our own output
EXIT_OUTPUT_FAILED = 74


# a full disk or a broken device behind our output (EDQUOT is not defined everywhere)
_OUTPUT_FULL = frozenset(getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EIO") if hasattr(errno, name))


def _quiet_stdout():
    """Point stdout at /dev/null, so the flush at exit does not meet the closed pipe again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def end(code):
    """Exit with `code` (as SystemExit would) now, when nothing else could still be running: exit handlers run
    (pending early probes ended, logging flushed), stdout and stderr flushed.  With another thread alive the
    interpreter's own exit joins it as before."""
    import threading

    if threading.active_count() > 1:
        return
    import atexit
    import os

    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code & 0xFF
    else:
        sys.stderr.write(f"{code}\n")         # what the interpreter prints for SystemExit("message")
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:                     # a closed pipe: the interpreter's exit would say it, then exit 120
            status = status or 120
    os._exit(status)


if __name__ == "__main__":
    run()
