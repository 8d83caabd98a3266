"""A local package index for tests: PEP 503 simple pages over real HTTP on 127.0.0.1, serving
wheels the test builds (no network, no build tool: a wheel is a zip with its metadata).

pip talks to it as to any mirror (--index-url / PIP_INDEX_URL); the server records every
request, so a test can show which index pip used, and can ask for HTTP basic auth to show
that credentials in an index URL work and are masked where ocrdeploy prints commands.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import html
import io
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlparse

from loopback import LoopbackServer

UV_VERSION = "0.13.9"
UV_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ocrdeploy-uv" / "wheels"


def uv_wheel() -> Path:
    """The real uv wheel, fetched from PyPI once for this machine (a test without it is skipped)."""
    found = sorted(UV_CACHE.glob(f"uv-{UV_VERSION}-*.whl"))
    if not found:
        UV_CACHE.mkdir(parents=True, exist_ok=True)
        p = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"uv=={UV_VERSION}",
                            "-d", str(UV_CACHE)], capture_output=True, text=True)
        found = sorted(UV_CACHE.glob(f"uv-{UV_VERSION}-*.whl"))
        if not found:
            import pytest

            pytest.skip(f"the uv {UV_VERSION} wheel could not be had from PyPI: {p.stderr[-300:]}")
    return found[0]


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def build_wheel(dest: Path, name: str, version: str, files: dict | None = None, requires=(),
                console_scripts: dict | None = None, extras=()) -> Path:
    """A py3-none-any wheel of `files` ({path in site-packages: text}) with its dist-info."""
    dist = f"{re.sub(r'[-.]+', '_', name)}-{version}"
    info = f"{dist}.dist-info"
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    meta += [f"Provides-Extra: {e}" for e in extras] + [f"Requires-Dist: {r}" for r in requires]
    content = {k: v.encode() if isinstance(v, str) else v for k, v in (files or {}).items()}
    content[f"{info}/METADATA"] = ("\n".join(meta) + "\n").encode()
    content[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: ocrdeploy-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    if console_scripts:
        content[f"{info}/entry_points.txt"] = ("[console_scripts]\n" + "".join(
            f"{k} = {v}\n" for k, v in console_scripts.items())).encode()
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for path, data in content.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        writer.writerow([path, f"sha256={digest}", len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    content[f"{info}/RECORD"] = record.getvalue().encode()
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name_, data in content.items():
            zf.writestr(name_, data)
    return path


class PipIndex(LoopbackServer):
    """Serves every *.whl under `root` at /simple/<project>/ (PEP 503), with sha256 fragments."""

    url_path = "/simple/"

    def __init__(self, root: Path, auth: tuple[str, str] | None = None):
        self.root, self.auth = Path(root), auth
        self.requests: list = []
        super().__init__()

    def url_with_auth(self) -> str:
        user, password = self.auth
        return self.url.replace("http://", f"http://{user}:{password}@")

    def projects(self) -> dict:
        out: dict = {}
        for whl in sorted(self.root.glob("*.whl")):
            out.setdefault(normalize(whl.name.split("-")[0]), []).append(whl)
        return out

    def handle(self, h, head=False):
        path = unquote(urlparse(h.path).path)
        self.requests.append((h.command, path))
        if self.auth:
            want = "Basic " + base64.b64encode(":".join(self.auth).encode()).decode()
            if h.headers.get("Authorization") != want:
                return self.send(h, 401, b"authentication required", "text/plain", head,
                                 {"WWW-Authenticate": 'Basic realm="test index"'})
        projects = self.projects()
        if path == "/simple/":
            links = "".join(f'<a href="/simple/{n}/">{n}</a>\n' for n in projects)
            return self.send(h, 200, f"<!DOCTYPE html><html><body>\n{links}</body></html>".encode(), "text/html", head)
        m = re.fullmatch(r"/simple/([^/]+)/", path)
        if m:
            wheels = projects.get(normalize(m.group(1)))
            if not wheels:
                return self.send(h, 404, b"not found", "text/plain", head)
            links = "".join(f'<a href="/files/{html.escape(w.name)}#sha256='
                            f'{hashlib.sha256(w.read_bytes()).hexdigest()}">{html.escape(w.name)}</a>\n'
                            for w in wheels)
            return self.send(h, 200, f"<!DOCTYPE html><html><body>\n{links}</body></html>".encode(), "text/html", head)
        m = re.fullmatch(r"/files/([^/]+\.whl)", path)
        if m and (self.root / m.group(1)).is_file():
            return self.send(h, 200, (self.root / m.group(1)).read_bytes(), "application/octet-stream", head)
        return self.send(h, 404, b"not found", "text/plain", head)


# ---------------------------------------------------------------- an SDK repository to clone and install -e
SDK_BACKEND = r'''"""A build backend with no dependencies (PEP 517/660), so the editable install needs nothing
from the index beyond what the test serves."""
import base64, hashlib, os, zipfile

NAME, VERSION = "minicpmvocr", "0.2.3"
HERE = os.path.dirname(os.path.abspath(__file__))


def _wheel(directory, files):
    info = "%s-%s.dist-info" % (NAME, VERSION)
    files = dict(files)
    files[info + "/METADATA"] = "Metadata-Version: 2.1\nName: %s\nVersion: %s\nProvides-Extra: all\n" % (NAME, VERSION)
    files[info + "/WHEEL"] = "Wheel-Version: 1.0\nGenerator: sdk-stand-in\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[info + "/entry_points.txt"] = "[console_scripts]\nminicpmvocr = minicpmvocr.cli:main\n"
    record = []
    for path, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
    files[info + "/RECORD"] = "\n".join(record + [info + "/RECORD,,"]) + "\n"
    name = "%s-%s-py3-none-any.whl" % (NAME, VERSION)
    with zipfile.ZipFile(os.path.join(directory, name), "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


get_requires_for_build_editable = get_requires_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    src = os.path.join(HERE, NAME)
    return _wheel(wheel_directory, {"%s/%s" % (NAME, f): open(os.path.join(src, f)).read()
                                    for f in os.listdir(src) if f.endswith(".py")})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, {"__editable__.%s.pth" % NAME: HERE + "\n"})
'''
SDK_CLI = '''import sys

BACKENDS = ["vllm", "llamacpp", "openai"]
LAYOUTS = ["ppdoclayout3_paddlex", "ppdoclayout3_torch", "ppdoclayout3_server"]


def main():
    if sys.argv[1:] == ["list-backends"]:
        print("backends: " + ", ".join(BACKENDS))
        print("layout providers: " + ", ".join(LAYOUTS))
        return 0
    sys.exit("usage: minicpmvocr list-backends")
'''


def sdk_repo(repo: Path) -> Path:
    """A git repository shaped like MiniCPM-OCR's (the SDK in sdk/), whose `minicpmvocr list-backends`
    prints the three backends and three layout providers the recipe checks for."""
    import subprocess

    pkg = repo / "sdk" / "minicpmvocr"
    pkg.mkdir(parents=True)
    (repo / "sdk" / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n')
    (repo / "sdk" / "backend.py").write_text(SDK_BACKEND)
    (pkg / "__init__.py").write_text("")
    (pkg / "cli.py").write_text(SDK_CLI)
    for args in (["init", "-q"], ["add", "."], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "sdk"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo
