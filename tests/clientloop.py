"""Requests through one URL on a thread of their own while something else happens to the servers behind
it (a rolling restart, a drain), as a user's clients would keep sending them.  Every outcome is kept (the
status code, or the error a request ended with), so a test can say how many were sent and how many failed."""

from __future__ import annotations

import httpx

from background import Background


class ClientLoop(Background):
    def __init__(self, send, pause: float):
        """send(): one request, returning an httpx response; pause: seconds between two requests."""
        super().__init__()
        self.send, self.pause = send, pause
        self.results: list = []

    def step(self):
        try:
            self.results.append(self.send().status_code)
        except httpx.HTTPError as exc:
            self.results.append(repr(exc))

    @property
    def failed(self) -> list:
        return [r for r in self.results if r != 200]
