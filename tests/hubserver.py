"""A local stand-in for the parts of the Hugging Face Hub and ModelScope APIs their download
clients use.

Real HTTP on 127.0.0.1, started by the tests.  Hugging Face (what huggingface_hub's
snapshot_download and model_info ask): repo info with file metadata (LFS sha256 and size),
the recursive tree listing, and resolve/ downloads with HEAD, ETag, X-Repo-Commit and Range.
ModelScope (what the real `modelscope` client, 1.40 with modelscope-hub 0.5, asks, recorded
against this server and read in modelscope_hub/_legacy_api.py and _download.py):
  GET /api/v1/models/<owner>/<name>/repo/files?Revision=master&Recursive=True  the listing
      ({"Code": 200, "Data": {"Files": [{"Path", "Name", "Type", "Size", "Sha256", "IsLFS", ...}]}})
  GET /api/v1/repos/internalAccelerationInfo  the intra-cloud region probe (404 here, as
      outside Alibaba Cloud: the client then downloads without a region header)
  GET /api/v1/models/<owner>/<name>/repo?Revision=master&FilePath=<path>  one file; an LFS
      file is answered with a 302 to its storage URL (here /oss/...), which honours Range,
      as the real site's CDN does; a small git file is served in place and ignores Range.
Behaviours a test can switch on per file, for both APIs: drop the connection half way the
first time (an interrupted download), always send fewer bytes than announced (truncation),
advertise a sha256 other than the bytes served (a corrupted upload), send slowly; and for
ModelScope, list more files from the second listing on than in the first (a server that answers
the name check cleanly and the downloader with hostile names).
`apis` chooses which of the two a server answers (the other's routes are 404).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs, quote, unquote, urlparse

from loopback import LoopbackServer


@dataclass
class Repo:
    files: dict                      # name -> bytes
    commit: str = "0123456789abcdef0123456789abcdef01234567"
    lfs: set = field(default_factory=lambda: {"model.safetensors"})
    advertise_sha: dict = field(default_factory=dict)   # name -> sha256 announced instead of the real one
    drop_once: set = field(default_factory=set)         # names whose first GET stops half way
    truncate: set = field(default_factory=set)          # names always served short
    advertise_size: dict = field(default_factory=dict)  # name -> size announced instead of the real one
    slow: set = field(default_factory=set)               # names sent in small pieces with pauses
    hold: dict = field(default_factory=dict)            # name -> threading.Event: half the body, then wait for it
    redirect: dict = field(default_factory=dict)        # name -> URL its GET (not HEAD) is sent to with a 302
    listed_later: dict = field(default_factory=dict)    # name -> bytes: in every ModelScope listing but the first
    listings: int = 0                                   # ModelScope listings answered so far


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class HubServer(LoopbackServer):
    def __init__(self, repos: dict, static: dict | None = None, apis=("hf", "modelscope"), host="127.0.0.1"):
        self.repos = repos
        self.apis = tuple(apis)
        self.static = static or {}      # path -> bytes, served with Range support (the layout tar)
        self.requests: list = []
        self.raw_paths: list = []       # with the query: ModelScope names its files in FilePath=
        self.authorization: list = []   # (path, the Authorization header or None) of every request
        self.dropped: set = set()
        super().__init__(host)

    # ---------------------------------------------------------------- routes
    def siblings(self, repo: Repo):
        out = []
        for name, data in sorted(repo.files.items()):
            size = repo.advertise_size.get(name, len(data))
            entry = {"rfilename": name, "size": size, "blobId": blob_id(data)}
            if name in repo.lfs:
                entry["lfs"] = {"sha256": repo.advertise_sha.get(name, sha256(data)), "size": size,
                                "pointerSize": 134}
            out.append(entry)
        return out

    def handle(self, h, head):
        url = urlparse(h.path)
        path = unquote(url.path)
        self.requests.append((h.command, path, h.headers.get("Range")))
        self.raw_paths.append(h.path)
        self.authorization.append((path, h.headers.get("Authorization")))
        if path.startswith(("/api/v1/", "/oss/")):
            if "modelscope" in self.apis:
                return self.modelscope(h, path, parse_qs(url.query), head)
            return self.send_json(h, 404, {"error": f"no route {path}"}, head)
        if "hf" not in self.apis and not path in self.static:
            return self.send_json(h, 404, {"error": f"no route {path}"}, head)
        m = re.fullmatch(r"/api/models/([^/]+/[^/]+)(?:/revision/([^/]+))?", path)
        if m:
            repo = self.repos.get(m.group(1))
            if repo is None:
                return self.send_json(h, 404, {"error": "Repository not found"}, head)
            return self.send_json(h, 200, {"id": m.group(1), "modelId": m.group(1), "sha": repo.commit,
                                           "private": False, "disabled": False, "gated": False,
                                           "siblings": self.siblings(repo)}, head)
        m = re.fullmatch(r"/api/models/(.+?)/tree/([^/]+)(/.*)?", path)
        if m:
            repo = self.repos.get(m.group(1))
            if repo is None:
                return self.send_json(h, 404, {"error": "Repository not found"}, head)
            tree = []
            for s in self.siblings(repo):
                item = {"type": "file", "path": s["rfilename"], "size": s["size"], "oid": s["blobId"]}
                if "lfs" in s:
                    item["lfs"] = {"oid": s["lfs"]["sha256"], "size": s["lfs"]["size"], "pointerSize": 134}
                tree.append(item)
            return self.send_json(h, 200, tree, head)
        if path in self.static:
            return self.send_file(h, Repo({path: self.static[path]}, lfs=set()), path, head)
        m = re.fullmatch(r"/(.+?)/resolve/([^/]+)/(.+)", path)
        if m and m.group(1) in self.repos:
            repo = self.repos[m.group(1)]
            name = m.group(3)
            if name not in repo.files:
                return self.send_json(h, 404, {"error": "Entry not found"}, head,
                                      extra={"X-Error-Code": "EntryNotFound"})
            if name in repo.redirect and not head:
                h.send_response(302)
                h.send_header("Location", repo.redirect[name])
                h.send_header("Content-Length", "0")
                h.end_headers()
                return
            return self.send_file(h, repo, name, head)
        return self.send_json(h, 404, {"error": f"no route {path}"}, head)

    # ---------------------------------------------------------------- ModelScope
    def ms_files(self, repo: Repo):
        out = []
        files = dict(repo.files, **(repo.listed_later if repo.listings else {}))
        repo.listings += 1
        for name, data in sorted(files.items()):
            out.append({"CommitMessage": "release", "CommittedDate": 1760832000, "CommitterName": "ocrdeploy-tests",
                        "Id": blob_id(data), "IsLFS": name in repo.lfs, "Mode": "33188",
                        "Name": name.rsplit("/", 1)[-1], "Path": name, "Revision": repo.commit,
                        "Sha256": repo.advertise_sha.get(name, sha256(data)),
                        "Size": repo.advertise_size.get(name, len(data)), "Type": "blob"})
        return out

    def ms_reply(self, h, code, data, head, message="success"):
        return self.send_json(h, code, {"Code": 200 if code == 200 else 10010205001, "Data": data,
                                        "Message": message, "RequestId": "ocrdeploy-tests",
                                        "Success": code == 200}, head)

    def modelscope(self, h, path, query, head):
        revision = (query.get("Revision") or ["master"])[0]
        m = re.fullmatch(r"/oss/(.+?)/(\w+)/(.+)", path)
        if m:
            repo = self.repos.get(m.group(1))
            if repo is None or m.group(3) not in repo.files:
                return self.ms_reply(h, 404, None, head, "file not found")
            return self.send_file(h, repo, m.group(3), head, hf=False)
        m = re.fullmatch(r"/api/v1/models/([^/]+/[^/]+)/repo(/files)?", path)
        if m is None:
            return self.ms_reply(h, 404, None, head, f"no route {path}")
        repo = self.repos.get(m.group(1))
        if repo is None or revision not in ("master", repo.commit):
            return self.ms_reply(h, 404, None, head, f"model {m.group(1)} revision {revision} not found")
        if m.group(2):
            return self.ms_reply(h, 200, {"Files": self.ms_files(repo), "IsVisual": 0}, head)
        name = (query.get("FilePath") or [""])[0]
        if name in repo.listed_later and repo.listings > 1:
            return self.send_file(h, Repo({name: repo.listed_later[name]}, lfs=set()), name, head, ranges=False,
                                  hf=False)
        if name not in repo.files:
            return self.ms_reply(h, 404, None, head, f"file {name} not found")
        if name in repo.lfs:
            h.send_response(302)
            h.send_header("Location", f"{self.url}/oss/{m.group(1)}/{repo.commit}/{quote(name)}")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        return self.send_file(h, repo, name, head, ranges=False, hf=False)

    def send_json(self, h, code, obj, head, extra=None):
        self.send(h, code, json.dumps(obj).encode(), "application/json", head, extra)

    def send_file(self, h, repo, name, head, ranges=True, hf=True):
        data = repo.files[name]
        etag = repo.advertise_sha.get(name, sha256(data)) if name in repo.lfs else blob_id(data)
        size = repo.advertise_size.get(name, len(data))
        start = 0
        rng = h.headers.get("Range") if ranges else None
        if rng:
            m = re.fullmatch(r"bytes=(\d+)-(\d*)", rng.strip())
            if m:
                start = int(m.group(1))
        body = data[start:]
        short = name in repo.truncate
        dropping = (not head) and name in repo.drop_once and name not in self.dropped
        h.send_response(206 if start else 200)
        h.send_header("Content-Type", "application/octet-stream")
        h.send_header("ETag", f'"{etag}"')
        if ranges:
            h.send_header("Accept-Ranges", "bytes")
        if hf:
            h.send_header("X-Repo-Commit", repo.commit)
        if hf and name in repo.lfs:
            h.send_header("X-Linked-Etag", f'"{etag}"')
            h.send_header("X-Linked-Size", str(size))
        if start:
            h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        sent = body[: len(body) // 2] if short else body
        h.send_header("Content-Length", str(len(sent) if short else len(body)))
        if dropping:
            h.send_header("Connection", "close")
        h.end_headers()
        if head:
            return
        if dropping:
            self.dropped.add(name)
            h.wfile.write(body[: len(body) // 2])
            h.wfile.flush()
            h.close_connection = True
            try:
                h.connection.shutdown(2)
            except OSError:
                pass
            return
        if name in repo.hold:
            h.wfile.write(sent[: len(sent) // 2])
            h.wfile.flush()
            repo.hold[name].wait(120)
            h.wfile.write(sent[len(sent) // 2:])
            return
        if name in repo.slow:
            import time

            for i in range(0, len(sent), 65536):
                try:
                    h.wfile.write(sent[i:i + 65536])
                    h.wfile.flush()
                except OSError:
                    return
                time.sleep(0.05)
            return
        h.wfile.write(sent)


def wait_for_partial_file(part, proc, size: int = 300_000, timeout: float = 60):
    """Until the download run by proc has written `size` bytes of `part` (so that killing it now leaves a
    partial file to resume); kills proc's group and fails the test when that never happens."""
    import os
    import signal
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if part.exists() and part.stat().st_size > size:
            return
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    raise AssertionError(f"the download never started: {part} has not reached {size} bytes")
