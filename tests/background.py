"""A loop on a thread of its own for the length of a `with` block: what a test watches or sends while the
command under test runs (client requests during a roll, /proc scans for leaked secrets)."""

from __future__ import annotations

import threading
import time


class Background:
    pause = 0.0

    def __init__(self):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def step(self):
        raise NotImplementedError

    def _run(self):
        while not self._stop.is_set():
            self.step()
            time.sleep(self.pause)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
