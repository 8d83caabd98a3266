"""Requests through one URL on a thread of their own while something else happens to the servers behind
it (a rolling restart, a drain), as a user's clients would keep sending them.  Every outcome is kept (the
status code, or the error a request ended with), so a test can say how many were sent and how many failed."""

from __future__ import annotations

import threading
import time

import httpx


class ClientLoop:
    def __init__(self, send, pause: float):
        """send(): one request, returning an httpx response; pause: seconds between two requests."""
        self.send, self.pause = send, pause
        self.results: list = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                self.results.append(self.send().status_code)
            except httpx.HTTPError as exc:
                self.results.append(repr(exc))
            time.sleep(self.pause)

    @property
    def failed(self) -> list:
        return [r for r in self.results if r != 200]

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
