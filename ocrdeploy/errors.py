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
