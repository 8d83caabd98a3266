"""A run over several hosts: one connection per host, opened once, used by every phase.

Hosts are worked on in parallel (bounded threads); a host that fails to connect
or errors is recorded with its one-line reason and the others carry on, the way
fabric's GroupResult maps each host to a result or an exception.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import HostError, HostFailed
from .connection import (DEFAULT_CONNECT_TIMEOUT, CommandFailed, Connection, connect, debug_connections,
                         interrupt_all)

DEFAULT_FORKS = 32  # hosts worked on at once unless --forks says otherwise


@dataclass
class HostOutcome:
    host: Any
    value: Any = None
    error: str | None = None       # one line; set when the host could not be worked on
    unreachable: bool = False

    @property
    def state(self) -> str:
        """What a report calls a host with an error: reached but failed is not unreachable."""
        return "unreachable" if self.unreachable else "failed"


class Session:
    def __init__(self, hosts, *, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 accept_new_host_keys: bool = False, max_parallel: int = DEFAULT_FORKS, verbosity: int = 0,
                 lazy: bool = False):
        """lazy: SSH connections open on first use (connection.connect), so a run that needs only the facts
        probe's answer makes one system-ssh round trip and no paramiko connection."""
        self.hosts = list(hosts)
        self.connect_timeout = connect_timeout
        self.accept_new_host_keys = accept_new_host_keys
        self.verbosity = verbosity
        self.lazy = lazy
        if verbosity >= 3:
            debug_connections()
        self.max_parallel = max(1, min(max_parallel, len(self.hosts) or 1))
        self._conns: dict[str, Connection] = {}
        self._failed: dict[str, str] = {}
        self._lock = threading.Lock()

    def connection(self, host) -> Connection:
        with self._lock:
            if host.name in self._conns:
                return self._conns[host.name]
            if host.name in self._failed:
                raise HostError(host.name, self._failed[host.name])
        try:
            conn = connect(host, connect_timeout=self.connect_timeout,
                           accept_new_host_keys=self.accept_new_host_keys, verbosity=self.verbosity, lazy=self.lazy)
        except HostError as exc:
            with self._lock:
                self._failed[host.name] = exc.message
            raise
        with self._lock:
            self._conns[host.name] = conn
        return conn

    def map(self, fn: Callable[[Connection, Any], Any], hosts=None) -> dict[str, HostOutcome]:
        """Run ``fn(conn, host)`` on every host in parallel; never raises for one host's failure."""
        hosts = self.hosts if hosts is None else hosts

        def one(host) -> HostOutcome:
            try:
                conn = self.connection(host)
            except HostError as exc:
                return HostOutcome(host, error=exc.message, unreachable=True)
            try:
                return HostOutcome(host, value=fn(conn, host))
            except HostError as exc:
                return HostOutcome(host, error=exc.message, unreachable=True)
            except HostFailed as exc:
                return HostOutcome(host, error=exc.message)
            except CommandFailed as exc:
                tail = exc.result.tail(3).replace("\n", " | ")
                return HostOutcome(host, error=f"{exc} {tail}".strip())

        pool = ThreadPoolExecutor(max_workers=min(self.max_parallel, len(hosts))) if len(hosts) > 1 else None
        try:
            if pool is None:
                return {hosts[0].name: one(hosts[0])}
            futures = [pool.submit(one, h) for h in hosts]
            outcomes = [f.result() for f in futures]
        except KeyboardInterrupt:
            # Ctrl-C: every host's command ends now (local process groups, SSH sessions closed), no step
            # starts after it, and the caller exits 130
            interrupt_all()
            self.close()
            raise
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
        return {o.host.name: o for o in outcomes}

    def close(self):
        for conn in self._conns.values():
            try:
                conn.close()
            except Exception:
                pass
        self._conns.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
