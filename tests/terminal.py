"""A test's child process that takes SIGINT as a terminal's Ctrl-C would reach it.

A test run started in the background by a non-interactive shell (`cmd &`, `nohup`, some CI runners) inherits SIGINT
ignored, and Python keeps an ignored SIGINT ignored at start-up: the child would never see the SIGINT the test sends,
and the Ctrl-C tests would time out for a reason that is not the code's. The child restores the default first.
"""

import signal


def sigint_as_from_a_terminal():
    """preexec_fn for subprocess: SIGINT back to its default, so Python installs its KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
