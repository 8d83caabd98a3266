"""Errors that cross room boundaries.

A UsageError is the user's input being wrong (a malformed inventory, an unknown
host, a bad flag): the command prints its one line and exits 2, never a traceback.
"""


class UsageError(Exception):
    """Bad input from the user; the message is the whole story (exit 2)."""

    exit_code = 2


class HostError(Exception):
    """One host could not be reached or used; other hosts carry on (exit 1)."""

    def __init__(self, host: str, message: str):
        super().__init__(f"{host}: {message}")
        self.host = host
        self.message = message


class HostFailed(Exception):
    """The host was reached but cannot be worked on (its state file is corrupt, ...): that host fails
    with this one line (exit 1, reachable), the others carry on."""

    def __init__(self, host: str, message: str):
        super().__init__(f"{host}: {message}")
        self.host = host
        self.message = message
