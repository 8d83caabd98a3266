"""One interface to a host, local (invoke) or remote (fabric), opened once per run.

The rest of the code calls ``run(Command)`` and never cares where the host is.
Host keys are verified: an unknown key is refused unless the user opted in with
--accept-new-host-keys, which records it.  Connection failures become a
HostError with one line that says what happened.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import HostError
from .command import Command, PythonCommand, secret_input, to_shell

DEFAULT_CONNECT_TIMEOUT = 10.0
# paramiko logs a failed handshake as a traceback through logging's last resort; the HostError says it
logging.getLogger("paramiko").addHandler(logging.NullHandler())


@dataclass
class CommandResult:
    command: str
    exit_code: int | None
    stdout: str
    stderr: str
    duration: float

    def tail(self, lines: int = 20) -> str:
        text = (self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr).rstrip()
        return "\n".join(text.splitlines()[-lines:])


def become_argv(user: str) -> tuple:
    """sudo as ``user``, never prompting (-n), with that user's HOME (-H) as Ansible's become has."""
    return ("sudo", "-n", "-H", "-u", user)


_SUDO_PASSWORD = ("sudo: a password is required", "sudo: no tty present and no askpass program specified")


def _sudo_wants_password(stderr: str) -> bool:
    """sudo's own refusal under -n (sudo 1.9: 'a password is required'; 1.8: 'no tty present ...')."""
    return any(line.strip() in _SUDO_PASSWORD for line in (stderr or "").splitlines())


class CommandFailed(Exception):
    def __init__(self, host: str, result: CommandResult, reason: str | None = None):
        self.host = host
        self.result = result
        what = reason or f"exit code {result.exit_code}"
        super().__init__(f"{host}: `{result.command}` failed ({what})")


class LineStream:
    """An out_stream for Connection.run that hands each complete line of a long command's output to
    on_line as it arrives (the rest of the output is still captured in the result)."""

    def __init__(self, on_line):
        self.on_line, self.buf = on_line, ""

    def write(self, data):
        self.buf += data
        while "\n" in self.buf:
            line, self.buf = self.buf.split("\n", 1)
            self.on_line(line)

    def flush(self):
        pass


class Connection:
    """The common interface; see LocalConnection and SSHConnection."""

    is_local = False

    def __init__(self, host, verbosity: int = 0):
        self.host = host
        self.name = host.name
        self.verbosity = verbosity  # -v: each command is shown; -vv: its output streams too (stderr)

    def run(self, command: Command | Sequence[str], *, timeout: float | None = None,
            ok_codes: Iterable[int] = (0,), stdin: str | None = None, echo: bool = False,
            out_stream=None) -> CommandResult:
        if not isinstance(command, Command):
            command = Command(command)
        command = self.prepare(command)
        if stdin is None:
            stdin = command.stdin
        secrets = secret_input(command.env)
        if secrets:
            stdin = secrets + (stdin or "")
        text, shown = self.shell(command), self.shell(command, mask=True)
        if self.verbosity >= 1:
            self._note(f"$ {shown}")
        if self.verbosity >= 2 and out_stream is None and not echo:
            out_stream = LineStream(lambda line: self._note(f"| {line}"))
        if INTERRUPTED.is_set():
            raise KeyboardInterrupt
        try:
            result = self._run_text(text, shown, timeout=timeout, stdin=stdin, echo=echo, out_stream=out_stream)
        except KeyboardInterrupt:
            # Ctrl-C outside invoke's own wait (as the command starts, or while its output is read): the
            # command ends all the same, whoever called run
            interrupt_all()
            raise
        if INTERRUPTED.is_set():          # Ctrl-C while another host's command ran: this one stops too
            raise KeyboardInterrupt
        if self.prefix(command) and result.exit_code == 1 and _sudo_wants_password(result.stderr):
            raise CommandFailed(self.name, result, f"sudo wants a password for {self._sudo_user(command)}; "
                                                   f"ocrdeploy never sends one (sudo -n): allow NOPASSWD for this "
                                                   f"user, or drop ansible_become")
        if result.exit_code not in tuple(ok_codes):
            reason = "timed out" if result.exit_code is None else None
            raise CommandFailed(self.name, result, reason)
        return result

    def run_light(self, command: Command | Sequence[str], **kwargs) -> CommandResult:
        """run() for a read-only command that may be run again without harm (the facts probe): over SSH it
        may go through the system ssh before any paramiko connection is opened (SSHConnection)."""
        return self.run(command, **kwargs)

    def ensure_open(self):
        """The connection made now where it is opened lazily: a failure to connect is this call's HostError."""
        return self

    def _note(self, line: str):
        """A verbose line: on stderr, so --json output stays one document; masked like every shown command."""
        sys.stderr.write(f"[{self.name}] {line}\n")
        sys.stderr.flush()

    def prepare(self, command: Command) -> Command:
        """The command as this host runs it: helpers get the inventory's ansible_python_interpreter, and
        every command the inventory's proxy vars (its own env wins)."""
        if isinstance(command, PythonCommand):
            command = command.with_python(self.host.python_interpreter)
        extra = self.command_env()
        if extra:
            command = type(command)(command.argv, env={**extra, **command.env}, cwd=command.cwd, sudo=command.sudo,
                                    stdin=command.stdin)
        return command

    def shell(self, command: Command, mask: bool = False) -> str:
        """The one shell text of a command on this host (masked for showing)."""
        return to_shell(command.argv, env=command.env, cwd=command.cwd, sudo=self.prefix(command), mask=mask)

    def prefix(self, command: Command) -> tuple:
        """What a command runs under here.  `sudo=True` commands need root: nothing when the
        commands already run as root, else sudo -n.  With ansible_become every other command
        runs as ansible_become_user (root by default).  Always -n: sudo fails instead of asking,
        so no password prompt is ever answered over the wire."""
        become = self.host.become_user
        if command.sudo:
            if become == "root" or (not become and self.is_root()):
                return become_argv("root") if become else ()
            return ("sudo", "-n")
        return become_argv(become) if become else ()

    def _sudo_user(self, command: Command) -> str:
        return "root" if command.sudo else (self.host.become_user or "root")

    def command_env(self) -> dict:
        """What the inventory sets for every command on this host: its proxy vars (a URL with credentials
        is shown as ***)."""
        from .command import Secret

        env = getattr(self.host, "proxy_env", dict)()
        return {k: Secret(v) if "@" in v else v for k, v in env.items()}

    def is_root(self) -> bool:
        return getattr(self, "_uid", None) == 0

    def set_uid(self, uid: int | None):
        self._uid = uid

    # --- implemented by subclasses
    def _run_text(self, text, shown, *, timeout, stdin, echo, out_stream) -> CommandResult:
        raise NotImplementedError

    def put(self, local: str | os.PathLike, remote: str):
        raise NotImplementedError

    def put_data(self, data: str | bytes, remote: str):
        """Content made here (a config, a sample page) to a file on the host, through put's atomic
        replace, leaving no temporary file behind on this machine."""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="ocrdeploy-") as d:
            local = os.path.join(d, os.path.basename(remote) or "data")
            with open(local, "wb") as fh:
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            self.put(local, remote)

    def forward(self, remote_port: int):
        """A context manager giving a local port that reaches 127.0.0.1:remote_port on the host."""
        import contextlib

        return contextlib.nullcontext(remote_port)

    def get(self, remote: str, local: str | os.PathLike):
        raise NotImplementedError

    def close(self):
        pass


class _Feed(io.StringIO):
    """A command's stdin, handed over in one piece: invoke reads a file-like stream one character per
    10 ms (a 1 KB request would take 10 s), then closes the command's stdin at the end."""

    def read(self, size=-1):
        return super().read()


class _WholeLine:
    """One of a command's two output streams on their way to one shared stream: invoke reads stdout and
    stderr in two threads, in chunks that end anywhere, so each gets its own buffer and passes on only
    whole lines, one at a time (a stdout line never breaks into the middle of a stderr line)."""

    def __init__(self, target, lock):
        self.target, self.lock, self.buf = target, lock, ""

    def write(self, data):
        self.buf += data
        if "\n" in self.buf:
            lines, _, self.buf = self.buf.rpartition("\n")
            with self.lock:
                self.target.write(lines + "\n")

    def flush(self):
        pass

    def close(self):
        """The last line, if it had no line break."""
        if self.buf:
            text, self.buf = self.buf, ""
            with self.lock:
                self.target.write(text + "\n")


def _whole_lines(stream) -> tuple:
    lock = threading.Lock()
    return _WholeLine(stream, lock), _WholeLine(stream, lock)


def _invoke_run(runner_owner, text, shown, timeout, stdin, echo, out_stream) -> CommandResult:
    from invoke.exceptions import CommandTimedOut

    start = time.monotonic()
    kwargs = dict(warn=True, hide=not echo, timeout=timeout,
                  in_stream=_Feed(stdin) if stdin is not None else False)
    writers = ()
    if out_stream is not None:
        writers = _whole_lines(out_stream)
        kwargs.update(out_stream=writers[0], err_stream=writers[1], hide=False)
    try:
        res = runner_owner.run(text, **kwargs)
    except CommandTimedOut as exc:
        for w in writers:
            w.close()
        res = exc.result
        return CommandResult(shown, None, res.stdout, res.stderr, time.monotonic() - start)
    for w in writers:
        w.close()
    elapsed = time.monotonic() - start
    exited = res.exited
    if timeout and exited in (None, -1) and elapsed >= timeout * 0.95:
        exited = None  # the remote runner reports a killed-on-timeout command as -1 at times
    return CommandResult(shown, exited, res.stdout, res.stderr, elapsed)


# ------------------------------------------------------------------ Ctrl-C
# invoke alone forwards an interrupt to a local command, waits for it to end and lets the run carry
# on with the next step.  Here the interrupt ends the running command with every process it started
# (found through /proc: the command stays in our process group, so killing the whole run still takes
# it down too), no command starts after it, and the run stops.
INTERRUPTED = threading.Event()
_RUNNING: set = set()
_running_lock = threading.Lock()


_REMOTES: set = set()       # the runners of the remote commands running now


def interrupt_all(grace=2.0):
    """Ctrl-C: every command of this run ends, local ones with their descendants, remote ones with
    their process group, and none starts after."""
    INTERRUPTED.set()
    with _running_lock:
        pids, remotes = list(_RUNNING), list(_REMOTES)
    deadline = time.monotonic() + grace
    for r in remotes:
        r.signal("TERM")
    for pid in pids:
        _end_tree(pid, grace)
    while remotes and time.monotonic() < deadline:
        remotes = [r for r in remotes if not r.channel.exit_status_ready()]
        time.sleep(0.05)
    for r in remotes:
        r.signal("KILL")


def _signal_channel(chan, name):
    """The SSH "signal" request (RFC 4254 6.9), which OpenSSH's sshd answers with killpg() on the
    command's process group, except for root logins ("session signalling requires privilege
    separation"), forced commands and subsystems."""
    try:
        from paramiko.common import cMSG_CHANNEL_REQUEST
        from paramiko.message import Message

        m = Message()
        m.add_byte(cMSG_CHANNEL_REQUEST)
        m.add_int(chan.remote_chanid)
        m.add_string("signal")
        m.add_boolean(False)
        m.add_string(name)
        chan.transport._send_user_message(m)
    except Exception:  # noqa: BLE001 - a lost connection: the command is beyond reach anyway
        pass


def _descendants(*roots) -> list[int]:
    """Every process below the given ones, from one read of /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, seen, todo = [], set(roots), list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                out.append(child)
                todo.append(child)
    return out


def _running(pid) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"     # a zombie has ended
    except (OSError, IndexError):
        return False


def _end_tree(pid, grace=2.0):
    """SIGTERM to the command and everything below it, SIGKILL to what is left after the grace period.
    The tree is read again on every pass: a process may fork while it is being ended (a shell's trap,
    git starting its remote helper), and a child missed once is reparented away when its parent dies,
    keeping the command's output pipes open so that the run could never finish."""
    import signal

    signalled: set[int] = set()

    def sweep(sig):
        found = [p for p in [pid, *_descendants(pid, *signalled)] if p not in signalled]
        if sig == signal.SIGKILL:                  # all that still run, reparented or not
            found += [p for p in signalled if _running(p)]
        for p in found:
            signalled.add(p)
            try:
                os.kill(p, sig)
            except (ProcessLookupError, PermissionError):
                pass

    sweep(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        sweep(signal.SIGTERM)                 # only the newcomers: the others had theirs
        if not any(_running(p) for p in signalled):
            return
        time.sleep(0.05)
    for _ in range(3):
        sweep(signal.SIGKILL)
        if not any(_running(p) for p in signalled):
            return
        time.sleep(0.05)


class _StopsOnInterrupt:
    """What both runners do on Ctrl-C: end every command of the run (not only their own) and stop;
    after it the output readers wait at most a moment, so that a process that escaped (a daemon
    that left its session) cannot keep the interrupted run from ending."""

    def send_interrupt(self, interrupt):
        interrupt_all()
        raise interrupt

    def _thread_join_timeout(self, target):
        return 2 if INTERRUPTED.is_set() else super()._thread_join_timeout(target)


@contextlib.contextmanager
def _sigint_deferred():
    """Ctrl-C waits while a command starts and is registered: a KeyboardInterrupt between the fork and
    the registration would leave a command that nothing ends.  Only the main thread receives it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got = []
    old = signal.signal(signal.SIGINT, lambda *a: got.append(a))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        if got and callable(old):
            old(*got[0])


def _interruptible_runner():
    from invoke.runners import Local

    class InterruptibleLocal(_StopsOnInterrupt, Local):
        def start(self, command, shell, env):
            with _sigint_deferred():
                super().start(command, shell, env)
                with _running_lock:
                    _RUNNING.add(self.process.pid)

        def stop(self):
            super().stop()
            # still running when its runner stops: abandoned by a Ctrl-C outside invoke's wait (as it
            # started, or while its output readers started); nothing else would end it
            process = getattr(self, "process", None)
            if process is None:
                return
            if process.poll() is None:
                _end_tree(process.pid)
            with _running_lock:
                _RUNNING.discard(process.pid)

    return InterruptibleLocal


PGID_MARK = b"@@ocrdeploy-pgid "


def _interruptible_remote():
    """Closing an SSH channel leaves a command without a terminal running on the host, so each remote
    command first names its process group on stderr (sshd makes the login shell it starts a session
    leader, so that shell's pid, the marker's $PPID, is the group's id); the runner takes that line
    out of the output, and Ctrl-C ends the group through a second channel of the same connection:
    kill works for every login (root's too, which sshd refuses the "signal" request), and with sudo
    for what runs as root."""
    from fabric.runners import Remote

    class InterruptibleRemote(_StopsOnInterrupt, Remote):
        pgid = None
        _marker_read = False

        def send_start_message(self, command):
            # through sh, so that a login shell of any syntax (fish has no $$, csh no >&2) runs it
            with _sigint_deferred():
                super().send_start_message(f"sh -c 'echo \"{PGID_MARK.decode()}$PPID\" >&2'; {command}")
                with _running_lock:
                    _REMOTES.add(self)

        def read_proc_stderr(self, num_bytes):
            if self._marker_read:
                return super().read_proc_stderr(num_bytes)
            self._marker_read = True
            head = b""
            while b"\n" not in head:
                chunk = super().read_proc_stderr(num_bytes)
                if not chunk:
                    break
                head += chunk
            line, nl, rest = head.partition(b"\n")
            if line.startswith(PGID_MARK) and line[len(PGID_MARK):].isdigit():
                self.pgid = int(line[len(PGID_MARK):])
                return rest if rest or not nl else self.read_proc_stderr(num_bytes)
            return head

        def signal(self, name):
            if self.pgid is None:
                _signal_channel(self.channel, name)
                return
            g = self.pgid
            text = (f"{{ kill -s {name} -- -{g} || kill -s {name} {g}; "
                    f"[ \"$(id -u)\" = 0 ] || sudo -n kill -s {name} -- -{g}; }} 2>/dev/null")
            try:
                chan = self.channel.get_transport().open_session(timeout=5)
                chan.exec_command(text)
                end = time.monotonic() + 5
                while not chan.exit_status_ready() and time.monotonic() < end:
                    time.sleep(0.02)
                chan.close()
            except Exception:  # noqa: BLE001 - the connection is gone: ask over the command's own channel
                _signal_channel(self.channel, name)

        def stop(self):
            # the same for a remote command left running by its runner (a Ctrl-C outside invoke's wait, a
            # timeout): closing the channel alone would leave it running on the host
            channel = getattr(self, "channel", None)
            if channel is not None and self.pgid is not None and not channel.exit_status_ready():
                self.signal("TERM")
            with _running_lock:
                _REMOTES.discard(self)
            super().stop()

    return InterruptibleRemote


class LocalConnection(Connection):
    is_local = True

    def __init__(self, host, verbosity: int = 0):
        super().__init__(host, verbosity)
        from invoke import Config, Context

        self._ctx = Context(Config(overrides={"run": {"shell": "/bin/sh"}, "runners": {"local": _interruptible_runner()}}))
        self._uid = os.getuid()

    def _run_text(self, text, shown, *, timeout, stdin, echo, out_stream):
        return _invoke_run(self._ctx, text, shown, timeout, stdin, echo, out_stream)

    def put(self, local, remote):
        import shutil

        remote = os.path.expanduser(remote)
        tmp = f"{remote}.ocrdeploy-tmp"
        shutil.copyfile(local, tmp)
        os.replace(tmp, remote)

    def get(self, remote, local):
        import shutil

        shutil.copyfile(os.path.expanduser(remote), local)


_known_hosts_lock = threading.Lock()


def known_hosts_path(host=None) -> Path:
    """The known_hosts file new keys are recorded in (the first of inventory.knownhosts' list); a HostError
    when every one given resolves to /dev/null or another non-file."""
    from ..inventory.knownhosts import known_hosts

    found = known_hosts(host)
    if not found.paths:
        name = getattr(host, "name", "localhost")
        raise HostError(name, f"no known_hosts file to check host keys against: {'; '.join(found.refused)}")
    return found.record_to


def _load_known_hosts(client, paths, host_name: str):
    """Every known_hosts file, line by line as OpenSSH reads them: a line paramiko cannot read (bad
    base64, an unknown key type) is skipped and said once, instead of making the whole file unreadable."""
    from paramiko.hostkeys import HostKeyEntry

    keys = client.get_host_keys()
    for path in paths:
        if not path.exists():
            continue
        skipped = []
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError as exc:
            raise HostError(host_name, f"cannot read known_hosts {path}: {exc.strerror or exc}")
        for number, line in enumerate(lines, start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                entry = HostKeyEntry.from_line(line, number)
            except Exception as exc:  # noqa: BLE001 - InvalidHostKey (a plain Exception), SSHException, ValueError...
                skipped.append(f"{number} ({type(exc).__name__})")
                continue
            if entry is None:
                skipped.append(f"{number} (not host, key type, key)")
                continue
            keys._entries.append(entry)
        if skipped:
            sys.stderr.write(f"warning: {host_name}: known_hosts {path}: skipped unreadable line(s) "
                             f"{', '.join(skipped[:5])}{' ...' if len(skipped) > 5 else ''}, as ssh does\n")


def _host_key_name(address: str, port: int) -> str:
    return address if port == 22 else f"[{address}]:{port}"


class UnknownHostKey(Exception):
    def __init__(self, name: str, key, path: Path):
        self.name, self.key, self.path = name, key, path
        super().__init__(name)


def _make_policies():
    import paramiko

    class RefuseUnknown(paramiko.MissingHostKeyPolicy):
        def __init__(self, path: Path):
            self.path = path

        def missing_host_key(self, client, hostname, key):
            raise UnknownHostKey(hostname, key, self.path)

    class RecordNew(paramiko.MissingHostKeyPolicy):
        """Accept a key never seen before and append it to known_hosts (never a changed one)."""

        def __init__(self, path: Path):
            self.path = path

        def missing_host_key(self, client, hostname, key):
            client.get_host_keys().add(hostname, key.get_name(), key)
            line = f"{hostname} {key.get_name()} {key.get_base64()}\n"
            with _known_hosts_lock:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                with open(self.path, "a", encoding="utf-8") as fh:
                    fh.write(line)

    return RefuseUnknown, RecordNew


class SSHConnection(Connection):
    def __init__(self, host, *, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 accept_new_host_keys: bool = False, verbosity: int = 0):
        super().__init__(host, verbosity)
        self.connect_timeout = connect_timeout
        self.accept_new = accept_new_host_keys
        self.port = host.port
        self._conn = None
        self._light = False

    def ensure_open(self):
        if self._conn is None:
            self.open()
        return self

    def run_light(self, command, **kwargs):
        self._light = True
        try:
            return self.run(command, **kwargs)
        finally:
            self._light = False

    def _run_openssh(self, text, shown, *, timeout, stdin, echo, out_stream) -> CommandResult | None:
        """The command through the system ssh (provision/openssh.py), or None when that cannot be told the
        same as the paramiko path, or when ssh exits 255 (it could not connect, authenticate or trust the
        host key): then paramiko opens the connection and says exactly why in its HostError, or runs it."""
        import subprocess

        from . import early_probe
        from .openssh import ssh_argv

        argv = ssh_argv(self)
        if argv is None:
            return None
        start = time.monotonic()
        proc = early_probe.adopt([*argv, text]) if stdin is not None else None   # started at the program's entry
        if proc is None:
            proc = subprocess.Popen([*argv, text], stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        with _running_lock:
            _RUNNING.add(proc.pid)
        try:
            try:
                out, err = proc.communicate(stdin.encode("utf-8") if stdin is not None else None, timeout=timeout)
                code = proc.returncode
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
                code = None
        except BaseException:           # Ctrl-C: ssh ends with the run (the host's sshd then ends the probe)
            proc.kill()
            proc.wait()
            raise
        finally:
            with _running_lock:
                _RUNNING.discard(proc.pid)
        if code == 255:
            return None
        stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        if out_stream is not None or echo:
            target = out_stream or sys.stdout
            for line in (stdout + stderr).splitlines():
                target.write(line + "\n")
        return CommandResult(shown, code, stdout, stderr, time.monotonic() - start)

    def _client(self, address, port, user, keys, gateway=None):
        """A fabric Connection whose host keys are checked like every other (known_hosts + policy)."""
        import fabric

        args = self.host.ssh_args
        kwargs = {"banner_timeout": self.connect_timeout, "auth_timeout": self.connect_timeout}
        if keys:
            kwargs["key_filename"] = list(keys)
        if args.compress:
            kwargs["compress"] = True
        from ..inventory.sshconfig import load_ssh_config

        user_config = load_ssh_config()     # less the Match blocks paramiko cannot evaluate, as the alias lookup
        config = (fabric.Config(ssh_config=user_config) if user_config is not None
                  else fabric.Config(runtime_ssh_path=os.environ.get("OCRDEPLOY_SSH_CONFIG") or None))
        config.runners.remote = _interruptible_remote()
        conn = fabric.Connection(address, user=user, port=port, config=config, gateway=gateway,
                                 forward_agent=args.forward_agent or None,
                                 connect_timeout=max(1, int(round(self.connect_timeout))), connect_kwargs=kwargs)
        from ..inventory.knownhosts import known_hosts

        path = known_hosts_path(self.host)
        _load_known_hosts(conn.client, known_hosts(self.host).paths, self.host.name)
        refuse, record = _make_policies()
        conn.client.set_missing_host_key_policy(record(path) if self.accept_new else refuse(path))
        return conn

    def _gateway(self, user, keys):
        """ProxyJump (OpenSSH's -J forms, see sshargs.jump_hops) or ProxyCommand from ansible_ssh_common_args;
        a malformed one is this host's one-line HostError, the other hosts carry on."""
        from ..inventory.sshargs import SSHArgsError, jump_hops

        args = self.host.ssh_args
        if args.proxy_command:  # OpenSSH's tokens: %h host, %p port, %r user, %% a percent sign
            import re

            user = user or os.environ.get("USER", "")
            if _unsafe_name(user):
                raise HostError(self.host.name, f"user {user!r} is not a login name (a ProxyCommand's %r)")
            tokens = {"%h": self.host.address, "%p": str(self.port), "%r": user, "%%": "%"}
            return re.sub(r"%[hpr%]", lambda m: tokens[m.group(0)], args.proxy_command)
        try:
            hops = jump_hops(args.proxy_jump)
        except SSHArgsError as exc:
            raise HostError(self.host.name, f"ansible_ssh_common_args: {exc}")
        gateway = None
        for hop in hops:
            gateway = self._client(hop.host, hop.port, hop.user or user, keys, gateway)
        return gateway

    def open(self):
        import paramiko

        host, args = self.host, self.host.ssh_args
        if _unsafe_name(host.address):
            template = "; Jinja templates are not expanded" if "{{" in host.address else ""
            raise HostError(host.name, f"address {host.address!r} is not a host name or IP address "
                                       f"(ansible_host: no spaces, quotes or shell characters, as ssh requires{template})")
        if "@" in host.address or host.address.count(":") == 1:
            # fabric reads user@host:port out of the address: beside ansible_port or ansible_user that is a
            # ValueError traceback, alone a port or user taken from where ocrdeploy shows neither
            raise HostError(host.name, f"address {host.address!r} is not a host name or IP address: give the "
                                       f"user as ansible_user and the port as ansible_port")
        self.port = host.explicit_port or args.port or 22
        user = host.user or args.user
        keys = [k for k in (host.key_file, args.identity_file and os.path.expanduser(args.identity_file)) if k]
        if args.connect_timeout:
            self.connect_timeout = args.connect_timeout
        gateway = self._gateway(user, keys)
        conn = self._client(host.address, self.port, user, keys, gateway)
        path = known_hosts_path(host)
        where = f"{host.address}:{self.port}"
        if self.verbosity >= 3:
            via = f", via {args.proxy_jump or args.proxy_command}" if gateway else ""
            self._note(f"connecting to {where} as {user or os.environ.get('USER', '?')}, key "
                       f"{', '.join(keys) or '(agent / ~/.ssh)'}, known_hosts {path}, "
                       f"timeout {self.connect_timeout:g} s{via}")
        try:
            conn.open()
        except UnknownHostKey as exc:
            fp = _fingerprint(exc.key)
            if gateway and host.address not in exc.name:
                where = f"jump host {exc.name}"
            raise HostError(host.name, f"host key of {where} is unknown ({exc.key.get_name()} {fp}); "
                                       f"check it, then re-run with --accept-new-host-keys to record it in {path}")
        except paramiko.BadHostKeyException as exc:
            raise HostError(host.name, f"host key of {where} CHANGED (now {_fingerprint(exc.key)}); possible "
                                       f"man-in-the-middle. If the host was reinstalled: "
                                       f"ssh-keygen -f {path} -R '{_host_key_name(host.address, self.port)}'")
        except paramiko.AuthenticationException as exc:
            user = user or os.environ.get("USER", "?")
            raise HostError(host.name, f"authentication failed for {user}@{where} ({exc}); check "
                                       f"ansible_user and ansible_ssh_private_key_file")
        except paramiko.ssh_exception.NoValidConnectionsError as exc:
            errs = {e.strerror or str(e) for e in exc.errors.values()}
            failed = ", ".join(sorted({f"{a[0]}:{a[1]}" for a in exc.errors})) if gateway else where
            raise HostError(host.name, f"cannot connect to {failed}{' (jump host)' if gateway else ''}: "
                                       f"{', '.join(sorted(errs))}")
        except socket.gaierror as exc:
            raise HostError(host.name, f"cannot resolve {host.address!r}: {exc.strerror or exc}")
        except (socket.timeout, TimeoutError):
            raise HostError(host.name, f"connection to {where} timed out after {self.connect_timeout:g} s")
        except (EOFError, paramiko.SSHException) as exc:
            # a peer that closes before its banner: a clean close (EOF) or a reset (SO_LINGER 0), seen as the bare
            # EOFError start_client re-raises from paramiko's own banner write, or under its banner SSHException; either
            # way it answered at once, so "no greeting within N s" would be the wrong reason
            closed = (EOFError, ConnectionResetError, ConnectionAbortedError)
            if isinstance(exc, EOFError) or isinstance(exc.__context__, closed) or isinstance(exc.__cause__, closed):
                raise HostError(host.name, f"{where} closed the connection without an SSH greeting "
                                           f"(not an SSH server, or it refuses this client)")
            if "banner" in str(exc).lower() or "no existing session" in str(exc).lower():
                raise HostError(host.name, f"no SSH greeting from {where} within {self.connect_timeout:g} s "
                                           f"(not an SSH server, or overloaded)")
            raise HostError(host.name, f"SSH error with {where}: {exc}")
        except (ConnectionResetError, ConnectionAbortedError):
            # the same peer seen a moment later: it accepted and reset before connect() looked at the socket (a
            # loaded machine, seen in CI), so paramiko's connect loop re-raises the reset bare; still an answer at once
            raise HostError(host.name, f"{where} closed the connection without an SSH greeting "
                                       f"(not an SSH server, or it refuses this client)")
        except OSError as exc:
            raise HostError(host.name, f"cannot connect to {where}: {exc.strerror or exc}")
        if args.keepalive:
            conn.transport.set_keepalive(args.keepalive)
        self._conn = conn
        return self

    def _run_text(self, text, shown, *, timeout, stdin, echo, out_stream):
        if self._light and self._conn is None:
            result = self._run_openssh(text, shown, timeout=timeout, stdin=stdin, echo=echo, out_stream=out_stream)
            if result is not None:
                return result
        self.ensure_open()
        try:
            result = _invoke_run(self._conn, text, shown, timeout, stdin, echo, out_stream)
        except (EOFError, OSError) as exc:
            raise HostError(self.name, f"connection lost while running `{shown}`: {exc}")
        if result.exit_code == -1 and not self._conn.is_connected:
            # the session ended without an exit status: the host went away, the command did not fail
            raise HostError(self.name, f"connection to {self.host.address}:{self.host.port} lost while running "
                                       f"`{shown}`")
        return result

    def put(self, local, remote):
        tmp = f"{remote}.ocrdeploy-tmp"
        self.ensure_open()
        self._conn.put(str(local), tmp)
        self.run(["mv", "-f", tmp, remote])

    def get(self, remote, local):
        self.ensure_open()
        self._conn.get(remote, str(local))

    def forward(self, remote_port: int):
        import contextlib

        @contextlib.contextmanager
        def tunnel():
            self.ensure_open()
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                local = s.getsockname()[1]
            with self._conn.forward_local(local_port=local, remote_port=remote_port, remote_host="127.0.0.1"):
                yield local

        return tunnel()

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _unsafe_name(name: str) -> bool:
    """OpenSSH's valid_hostname() rule (ssh.c): no control characters, spaces or shell metacharacters,
    no leading '-'; such a name can reach a ProxyCommand's shell through %h."""
    return name.startswith("-") or any(c.isspace() or not c.isprintable() or c in "'`\"$\\;&<>|(){}" for c in name)


def _fingerprint(key) -> str:
    import base64
    import hashlib

    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def connect(host, *, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
            accept_new_host_keys: bool = False, verbosity: int = 0, lazy: bool = False) -> Connection:
    """Open a connection to ``host``; raises HostError with a one-line reason.  ``lazy``: an SSH host's
    paramiko connection opens on first use (a failure is then that call's HostError), and a run_light()
    before it may go through the system ssh instead."""
    for note in host.ignored_settings():
        sys.stderr.write(f"warning: {host.name}: ignored {note}\n")
    if host.is_local:
        return LocalConnection(host, verbosity)
    conn = SSHConnection(host, connect_timeout=connect_timeout, accept_new_host_keys=accept_new_host_keys,
                         verbosity=verbosity)
    return conn if lazy else conn.open()


def debug_connections():
    """-vvv: paramiko's own log (key exchange, authentication, channels) on stderr."""
    import logging

    logger = logging.getLogger("paramiko")
    if not any(getattr(h, "_ocrdeploy", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("[paramiko] %(levelname)s %(message)s"))
        handler._ocrdeploy = True
        logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
