"""Download and verify models where they are served: this runs on the host.

Standard library only, except the hub clients (huggingface_hub, modelscope), which
are imported lazily and only for a hub download.  It reads one JSON request and
prints one JSON result after MARKER; progress goes to stdout as "@@progress" lines
(the install engine reads them from the step's log into a progress bar).

Hashing is the long part of a re-check: files are read in large blocks into one
buffer (no copies) and hashed with OpenSSL's SHA-256 through hashlib, which releases
the GIL, so several files hash at once on several cores.  A digest is cached by
(path, size, mtime_ns, inode): an unchanged file is not read again unless asked.
"""

import copy
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tarfile
import threading
import time

MARKER = "@@OCRDEPLOY-MODELS@@"
PROGRESS = "@@progress"
BLOCK = 8 << 20
QUARANTINE = ".ocrdeploy-quarantine"
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pdiparams", ".pt", ".pth", ".gguf")
RELEASE_FIELDS = ("release", "release_id", "release_tag", "release_version", "release_date", "version", "commit")
_print_lock = threading.Lock()


def _print_progress(label, done, total):
    with _print_lock:
        sys.stdout.write("%s %s %d %d\n" % (PROGRESS, label.replace(" ", "_"), done, total))
        sys.stdout.flush()


# Where progress goes: on the host, "@@progress" lines into the step's log; a caller in-process
# (inv models --verify-only) replaces it with its own progress bar.
progress_hook = _print_progress


def emit(label, done, total):
    progress_hook(label, done, total)


class Throttle(object):
    def __init__(self, label, total, every=0.5):
        self.label, self.total, self.every, self.last, self.done = label, total, every, 0.0, 0
        self.lock = threading.Lock()

    def add(self, n):
        with self.lock:
            self.done += n
            now = time.time()
            if now - self.last >= self.every or self.done >= self.total:
                self.last = now
                emit(self.label, self.done, self.total)


# ------------------------------------------------------------------ hashing
def sha256_file(path, progress=None):
    h = hashlib.sha256()
    buf = bytearray(BLOCK)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as fh:
        while True:
            n = fh.readinto(buf)
            if not n:
                break
            h.update(view[:n])
            if progress is not None:
                progress.add(n)
    return h.hexdigest()


def _key(path):
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def load_cache(path):
    try:
        with open(path) as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError, RecursionError):     # ours, but a file on disk all the same
        return {}


def save_cache(path, data):
    if not path:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_replace(path, lambda fh: json.dump(data, fh))
    except OSError:
        pass       # a cache: without it the next run hashes again


def write_replace(path, write):
    """Write `path` whole or not at all: into PATH.PID.tmp, then renamed over it; a failed write (a full
    disk) removes its temporary file rather than leaving it behind."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        with open(tmp, "w") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class model_lock(object):
    """One fetch of a model directory at a time on a host: a second `inv models` of the same model waits
    for the first (saying whom it waits for) instead of both writing the same .part files."""

    def __init__(self, dest, name):
        self.path = os.path.join(os.path.dirname(dest), ".%s.lock" % os.path.basename(dest))
        self.name, self.dest, self.fd = name, dest, None

    def __enter__(self):
        import fcntl

        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (BlockingIOError, PermissionError):
            holder = os.pread(self.fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            sys.stderr.write("%s: waiting for %s, which is fetching it into %s\n" % (self.name, holder, self.dest))
            sys.stderr.flush()
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(self.fd)
                raise
        try:                      # who holds it, for the next one to say; a full disk only loses the note
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, ("pid %d (inv models, since %s)" % (os.getpid(), time.strftime("%H:%M:%S"))).encode(),
                      0)
        except OSError:
            pass
        return self

    def __exit__(self, *exc):
        try:
            os.ftruncate(self.fd, 0)
        except OSError:
            pass
        os.close(self.fd)         # closing releases the lock


def hash_files(paths, cache_path=None, rehash=False, workers=None, label="sha256"):
    """{path: {"sha256", "cached"}} for every path; unchanged files come from the cache."""
    cache = load_cache(cache_path) if cache_path else {}
    out, todo = {}, []
    for p in paths:
        key = _key(p)
        hit = cache.get(os.path.abspath(p))
        if hit and not rehash and hit.get("key") == key:
            out[p] = {"sha256": hit["sha256"], "cached": True}
        else:
            todo.append((p, key))
    if todo:
        total = sum(k[0] for _, k in todo)
        progress = Throttle(label, total)
        lock = threading.Lock()
        errors = []

        def work(item):
            p, key = item
            try:
                digest = sha256_file(p, progress)
            except OSError as exc:
                errors.append("%s: %s" % (p, exc))
                return
            with lock:
                out[p] = {"sha256": digest, "cached": False}
                cache[os.path.abspath(p)] = {"key": key, "sha256": digest}

        n = workers or min(len(todo), _cpus())
        if n <= 1:
            for item in todo:
                work(item)
        else:
            queue = list(todo)
            qlock = threading.Lock()

            def runner():
                while True:
                    with qlock:
                        if not queue:
                            return
                        item = queue.pop(0)
                    work(item)

            threads = [threading.Thread(target=runner) for _ in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        if errors:
            raise OSError("; ".join(errors))
        save_cache(cache_path, cache)
    return out


def _cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# ------------------------------------------------------------------ names from outside
class UnsafeName(ValueError):
    """A file name from a hub, a mirror or a manifest that would land outside the model directory."""


def inside(root, name):
    """The path of `name` (a '/'-separated relative name from a hub listing or a manifest) under `root`.

    A hub decides these names, so one that is absolute, has an empty, '.' or '..' segment, or
    resolves outside `root` through a link already there is refused: nothing is ever written,
    read or moved outside the directory the model belongs in.
    """
    parts = name.split("/") if isinstance(name, str) else None
    if not parts or name.startswith("/") or "\0" in name or any(p in ("", ".", "..") for p in parts):
        raise UnsafeName("refusing the file name %r: a model file must be a plain relative name under %s"
                         % (name, root))
    path = os.path.join(root, *parts)
    real_root = os.path.realpath(root)
    if os.path.commonpath([real_root, os.path.realpath(path)]) != real_root:
        raise UnsafeName("refusing the file name %r: it resolves outside %s" % (name, root))
    return path


def _pattern(name):
    """An fnmatch pattern that matches exactly this name (the hub client filters with fnmatch)."""
    return "".join("[%s]" % c if c in "*?[" else c for c in name)


# ------------------------------------------------------------------ verification
MANIFEST_MAX = 4 << 20     # a release_manifest.json: a name -> sha256 map for a few hundred files is ~50 KB


def read_manifest(path):
    """(the manifest, None), (None, None) when there is none, or (None, what is wrong in one line): read
    only when it is a regular file under MANIFEST_MAX, and nesting too deep for the parser is said so."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):       # a FIFO would block the read forever
            return None, "%s: not a regular file" % path
        if st.st_size > MANIFEST_MAX:
            return None, "%s: %s, more than the %s a manifest may be" % (path, human_bytes(st.st_size),
                                                                         human_bytes(MANIFEST_MAX))
        with open(path) as fh:
            data = json.loads(fh.read(MANIFEST_MAX + 1))
    except FileNotFoundError:
        return None, None
    except RecursionError:
        return None, "%s: unreadable manifest (nested too deeply)" % path
    except (OSError, ValueError) as exc:
        return None, "%s: unreadable manifest (%s)" % (path, exc)
    if not isinstance(data, dict):
        return None, "%s: a manifest must be a JSON object" % path
    return data, None


def quarantine(root, rel, digest):
    qdir = os.path.join(root, QUARANTINE)
    os.makedirs(qdir, exist_ok=True)
    target = os.path.join(qdir, "%s.%s.bad" % (rel.replace("/", "__"), (digest or "unknown")[:12]))
    os.replace(os.path.join(root, rel), target)
    return target


def verify(spec, root, cache_path=None, rehash=False, manifest_path=None, lfs=None, sizes=None,
           move_bad=True, hub_label="hub LFS metadata"):
    """Check a model directory; returns {"ok", "status", "problems", "files", "manifest", ...}.

    spec: {"name", "kind", "required": [...], "weight": file the manifest's weight_sha256 is for}
    lfs: {relative path: sha256} from the hub; sizes: {relative path: bytes} expected.
    """
    res = {"name": spec["name"], "kind": spec["kind"], "path": root, "problems": [], "files": {},
           "manifest": None, "quarantined": [], "compared": []}
    if not os.path.isdir(root):
        res["problems"].append("%s: not a directory" % root)
        return _finish(res)
    names, odd = set(), set()       # regular files (links followed); broken links, FIFOs, devices
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".cache", QUARANTINE, ".git")]
        for f in filenames:
            full = os.path.join(dirpath, f)
            (names if os.path.isfile(full) else odd).add(os.path.relpath(full, root))
    if spec["kind"] == "layout":
        if not any(n.endswith(".pdiparams") for n in names) and any(n.endswith(".safetensors") for n in names):
            res["problems"].append("%s is a safetensors model directory, not a Paddle inference directory "
                                   "(OCR_LAYOUT_MODEL_DIR needs inference.pdiparams, inference.json, "
                                   "inference.yml)" % root)
            return _finish(res)
    for req in spec.get("required") or ():
        p = os.path.join(root, req)
        if req in odd:
            res["problems"].append("required file %s is a broken link or not a regular file" % req)
        elif req not in names:
            res["problems"].append("missing required file %s" % req)
        elif os.path.getsize(p) == 0:
            res["problems"].append("required file %s is empty" % req)
    expected = {}
    mpath = manifest_path or os.path.join(root, "release_manifest.json")
    manifest, err = read_manifest(mpath)
    if err:
        res["problems"].append(err)
    if manifest is not None:
        res["manifest"] = {k: manifest[k] for k in manifest if k != "files"}
        res["manifest_path"] = mpath
        weight_sha = manifest.get("weight_sha256")
        files = manifest.get("files") or {}
        if weight_sha and not _is_sha256(weight_sha):
            res["problems"].append("%s: weight_sha256 must be a sha256 (64 hex digits), got %r" % (mpath, weight_sha))
        elif weight_sha:
            expected.setdefault(spec.get("weight") or "model.safetensors", []).append(
                ("release_manifest.json weight_sha256", weight_sha.lower()))
        if not isinstance(files, dict):
            res["problems"].append("%s: files must map file names to sha256, got a %s" % (mpath, type(files).__name__))
            files = {}
        for name, digest in files.items():
            try:
                inside(root, name)
            except UnsafeName as exc:
                res["problems"].append("%s: %s" % (mpath, exc))
                continue
            if not _is_sha256(digest):
                res["problems"].append("%s: files[%r] must be a sha256 (64 hex digits), got %r" % (mpath, name, digest))
                continue
            expected.setdefault(name, []).append(("release_manifest.json files", digest.lower()))
    for name, digest in (lfs or {}).items():
        if name.endswith(WEIGHT_SUFFIXES):
            expected.setdefault(name, []).append((hub_label, digest.lower()))
    for name, size in (sizes or {}).items():
        p = os.path.join(root, name)
        if name in names and size is not None and os.path.getsize(p) != size:
            res["problems"].append("%s is truncated or wrong: %d bytes, the hub says %d" % (
                name, os.path.getsize(p), size))
            expected.pop(name, None)
    for name in list(expected):
        if name not in names:
            res["problems"].append("missing %s (listed with a sha256)" % name)
            expected.pop(name)
    weights = [n for n in names if n.endswith(WEIGHT_SUFFIXES)]
    if spec["kind"] in ("main", "draft", "deepseek") and not any(w in expected for w in weights):
        res["problems"].append("nothing to verify the weights against: no release_manifest.json sha256 and no "
                               "hub metadata for %s" % (", ".join(sorted(weights)) or "the weight files"))
    if expected:
        digests = hash_files([os.path.join(root, n) for n in sorted(expected)], cache_path, rehash,
                             label="sha256:" + spec["name"])
        for name in sorted(expected):
            got = digests[os.path.join(root, name)]
            entry = {"sha256": got["sha256"], "cached": got["cached"], "checked_against": []}
            bad = [(src, want) for src, want in expected[name] if want != got["sha256"]]
            entry["checked_against"] = [src for src, _ in expected[name]]
            res["files"][name] = entry
            res["compared"].append(name)
            if bad:
                for src, want in bad:
                    res["problems"].append("%s: sha256 %s does not match %s (%s)" % (name, got["sha256"], src, want))
                if move_bad:
                    res["quarantined"].append(quarantine(root, name, got["sha256"]))
    return _finish(res)


def _is_sha256(value):
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdefABCDEF" for c in value)


def _finish(res):
    res["ok"] = not res["problems"]
    res["status"] = "verified" if res["ok"] else "failed"
    return res


# ------------------------------------------------------------------ fetching
def dir_bytes(path):
    total = 0
    for dirpath, _, filenames in os.walk(path):
        for f in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


class Watch(object):
    """Reports the bytes that arrive under a directory while a download runs."""

    def __init__(self, label, path, total, base):
        self.label, self.path, self.total, self.base = label, path, total, base
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.daemon = True

    def run(self):
        while not self.stop.wait(1.0):
            emit(self.label, max(0, dir_bytes(self.path) - self.base), self.total)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def check_space(dest, needed, what="the download"):
    probe = dest
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    free = shutil.disk_usage(probe).free
    if needed > free:
        raise OSError(28, "not enough disk space at %s: %s needs %s more, %s free" % (
            probe, what, human_bytes(needed), human_bytes(free)))


def human_bytes(n):
    """A size as a person reads it: GiB for the large ones, MiB, KiB or bytes for the small ones (never 0.0 GiB)."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return "%.1f %s" % (n / float(1 << shift), unit)
    return "%d bytes" % n


def _partial_bytes(paths):
    """The bytes a previous run left in partial files that a resume keeps (the disk check credits them)."""
    total = 0
    for p in paths:
        if p and os.path.isfile(p):
            total += os.path.getsize(p)
    return total


def check_space_for(dest, sizes, finals, partials):
    """check_space for the files of a listing ({name: size}) not yet there at their size, less what their
    resumable partial files ({name: path}) already hold; returns the listing's total bytes."""
    done = {n for n, size in sizes.items() if size and os.path.isfile(finals[n]) and os.path.getsize(finals[n]) == size}
    total = sum(v for v in sizes.values() if v)
    check_space(dest, total - sum(sizes[n] for n in done)
                - _partial_bytes(p for n, p in partials.items() if n not in done))
    return total


LISTING_MAX = 32 << 20       # a hub's JSON answer (a file listing, repo info): far above any real one


LOW_SPEED_BYTES, LOW_SPEED_WINDOW = 1024, 60.0    # as curl's --speed-limit / --speed-time


class Pace(object):
    """Ends a transfer that stays under LOW_SPEED_BYTES a second for LOW_SPEED_WINDOW seconds: a server
    that drips a byte now and then resets the socket timeout with each one and would never time out."""

    def __init__(self, what):
        self.what, self.start, self.count = what, time.monotonic(), 0

    def add(self, n):
        self.count += n
        now = time.monotonic()
        if now - self.start >= LOW_SPEED_WINDOW:
            if self.count < LOW_SPEED_BYTES * (now - self.start):
                raise OSError("%s: less than %s a second for %g s; stopped" % (
                    self.what, human_bytes(LOW_SPEED_BYTES), LOW_SPEED_WINDOW))
            self.start, self.count = now, 0


def read_chunks(resp, what, size=1 << 16):
    """The body as it arrives (read1: whatever is there, not a full buffer), under Pace's speed floor."""
    read = getattr(resp, "read1", None) or resp.read
    pace = Pace(what)
    while True:
        chunk = read(size)
        if not chunk:
            return
        pace.add(len(chunk))
        yield chunk


def read_bounded(resp, limit, what):
    """A network body read whole only while it stays under `limit` bytes and above the speed floor: a
    hostile or broken server cannot make us hold more in memory or wait forever (the announced length
    is refused before reading)."""
    length = resp.headers.get("Content-Length") if getattr(resp, "headers", None) is not None else None
    if length and length.isdigit() and int(length) > limit:
        raise OSError("%s announces %s, more than the %s it may be" % (what, human_bytes(int(length)),
                                                                       human_bytes(limit)))
    body = bytearray()
    for chunk in read_chunks(resp, what):
        body += chunk
        if len(body) > limit:
            raise OSError("%s is larger than the %s it may be" % (what, human_bytes(limit)))
    return bytes(body)


def fetch_hf(spec, dest, endpoint=None, revision=None, offline=False, cache=None):
    """snapshot_download into dest; returns the hub's sha256/size of every file it lists."""
    if endpoint:
        os.environ["HF_ENDPOINT"] = endpoint          # read when huggingface_hub is imported
    if offline:
        os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    from huggingface_hub import HfApi, hf_hub_url, snapshot_download
    from huggingface_hub.utils import build_hf_headers

    api = HfApi(endpoint=endpoint) if endpoint else HfApi()
    info = api.model_info(spec["repo"], revision=revision, files_metadata=True)
    lfs, sizes = {}, {}
    for s in info.siblings or []:
        lf = getattr(s, "lfs", None)
        sha = (lf.get("sha256") if isinstance(lf, dict) else getattr(lf, "sha256", None)) if lf else None
        size = (lf.get("size") if isinstance(lf, dict) else getattr(lf, "size", None)) if lf else None
        if sha:
            lfs[s.rfilename] = sha
        sizes[s.rfilename] = size if size is not None else getattr(s, "size", None)
    # every name the hub lists, and its resumable .part, is checked before the first byte is written
    paths = {n: (inside(dest, n), inside(dest, ".cache/ocrdeploy/%s.part" % n) if n in lfs else None)
             for n in sizes}
    os.makedirs(dest, exist_ok=True)
    total = check_space_for(dest, sizes, {n: f for n, (f, _) in paths.items()},
                            {n: paths[n][1] for n in lfs})
    with Watch("download:" + spec["name"], dest, total, 0):
        # The large (LFS) files first, through a .part file that the next run resumes: the hub client
        # downloads into a per-process temporary file, so an interrupted run would start them over.
        for name, sha in sorted(lfs.items()):
            final, part = paths[name]
            if os.path.isfile(final) and os.path.getsize(final) == sizes.get(name):
                # the same size is not the same bytes (a weight written in place), and the hub client
                # trusts its own record for a file changed within a second of it: the hash decides
                if hash_files([final], cache, label="sha256:" + spec["name"])[final]["sha256"] == sha:
                    continue
                os.unlink(final)
            url = hf_hub_url(spec["repo"], name, revision=info.sha, endpoint=endpoint)
            download_resumable(url, part, final, headers=build_hf_headers(), total=sizes.get(name))
            got = hash_files([final], cache, label="sha256:" + spec["name"])[final]["sha256"]
            if got == sha:
                _mark_downloaded(dest, name, info.sha, sha)
        # only the names checked above, whatever the hub's tree listing says
        snapshot_download(spec["repo"], revision=revision or info.sha, local_dir=dest,
                          allow_patterns=[_pattern(n) for n in sorted(sizes)],
                          **({"endpoint": endpoint} if endpoint else {}))
    emit("download:" + spec["name"], total, total)
    return {"lfs": lfs, "sizes": sizes, "commit": info.sha}


def _mark_downloaded(dest, name, commit, etag):
    """Tell the hub client this file is the one it would fetch (it would otherwise hash it again)."""
    try:
        from huggingface_hub._local_folder import write_download_metadata
        write_download_metadata(local_dir=dest, filename=name, commit_hash=commit, etag=etag)
    except Exception:  # noqa: BLE001 - a private helper: without it the client re-hashes, no harm
        pass


HF_DEFAULT = "https://huggingface.co"
MS_DEFAULT = "https://www.modelscope.cn"


def _mask(url):
    return re.sub(r"//[^/@\s]+@", "//***@", url) if url else url


def _urlopen(url, timeout, method="GET"):
    import urllib.request

    return urllib.request.urlopen(urllib.request.Request(url, method=method, headers={
        "Accept": "application/json", "User-Agent": "ocrdeploy"}), timeout=timeout)


def modelscope_listing(endpoint, model_id, revision, timeout):
    """The file list the modelscope client asks for first (GET .../repo/files): {path: (size, sha256)}."""
    from urllib.parse import quote, urlencode

    where = _mask(endpoint or MS_DEFAULT)
    url = "%s/api/v1/models/%s/repo/files?%s" % ((endpoint or MS_DEFAULT).rstrip("/"), quote(model_id),
                                                  urlencode({"Revision": revision, "Recursive": "True"}))
    with _urlopen(url, timeout) as resp:
        body = json.loads(read_bounded(resp, LISTING_MAX, "the ModelScope listing of %s" % model_id))
    data = body.get("Data", body) if isinstance(body, dict) else body
    files = data.get("Files") if isinstance(data, dict) else data
    if not isinstance(files, list):
        raise OSError("%s: ModelScope at %s sent no file list" % (model_id, where))
    out, commit = {}, None
    for i, f in enumerate(files):
        bad = _listing_entry_problem(f)
        if bad:
            raise OSError("%s: ModelScope at %s sent an unusable file list: entry %d %s" % (model_id, where, i, bad))
        if (f.get("Type") or "blob") == "tree" or not f.get("Path"):
            continue
        out[f["Path"]] = (f.get("Size"), (f.get("Sha256") or "").lower() or None)
        commit = commit or f.get("Revision")
    return out, commit


def _listing_entry_problem(f):
    """What is wrong with one entry of a ModelScope listing, in words (None when it is usable)."""
    if not isinstance(f, dict):
        return "is a %s, not an object with Path, Size and Sha256" % type(f).__name__
    for key, kinds, what in (("Path", str, "a file name"), ("Type", str, "a string"),
                             ("Revision", str, "a string"), ("Sha256", str, "a sha256")):
        if f.get(key) is not None and not isinstance(f[key], kinds):
            return "has %s %r, not %s" % (key, f[key], what)
    size = f.get("Size")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        return "has Size %r, not a number of bytes" % (size,)
    sha = f.get("Sha256")
    if sha and not _is_sha256(sha):
        return "has Sha256 %r, not 64 hex digits" % (sha,)
    return None


def fetch_modelscope(spec, dest, model_id, endpoint=None, revision=None, listing=None):
    """Each file of the listing ocrdeploy checked, one by one, through the modelscope client's per-file
    download (modelscope_hub's HubApi.download_file, the one `modelscope download --model ID FILE` uses):
    it resumes a partial `.incomplete` file with a Range request and checks the size and sha256 we pass
    it.  The client's snapshot_download would fetch the listing again and write whatever names that
    second answer holds (modelscope_hub 0.5.1 joins them to local_dir unchecked), so it is not used:
    the names written are the names checked."""
    revision = revision or "master"
    files, commit = listing or modelscope_listing(endpoint, model_id, revision, 60)
    paths = {name: inside(dest, name) for name in files}   # refused before the first byte is written
    sizes = {n: s for n, (s, _) in files.items()}
    shas = {n: h for n, (_, h) in files.items() if h}
    os.makedirs(dest, exist_ok=True)
    total = check_space_for(dest, sizes, paths, {n: p + ".incomplete" for n, p in paths.items() if sizes[n]})
    import modelscope_hub
    from modelscope_hub import HubApi

    version = tuple(int(x) for x in re.findall(r"\d+", getattr(modelscope_hub, "__version__", "0"))[:2])
    if version < (0, 5):
        raise OSError("modelscope-hub %s has no checked per-file download (0.5 or later has): upgrade it"
                      % modelscope_hub.__version__)
    api = HubApi(endpoint=endpoint) if endpoint else HubApi()
    with Watch("download:" + spec["name"], dest, total, 0):
        for name in sorted(files):
            got = api.download_file(model_id, "model", name, revision=revision, local_dir=dest,
                                    expected_sha256=shas.get(name), file_size=sizes.get(name))
            if os.path.realpath(str(got)) != os.path.realpath(paths[name]):
                raise UnsafeName("refusing %s: the client wrote %s to %s, not to %s" % (model_id, name, got,
                                                                                       paths[name]))
    emit("download:" + spec["name"], total, total)
    return {"lfs": shas, "sizes": sizes, "commit": commit or revision, "hub_label": "ModelScope listing"}


def source_label(m):
    where = {"hf": m.get("endpoint") or HF_DEFAULT, "modelscope": m.get("endpoint") or MS_DEFAULT,
             "url": m.get("url")}.get(m["source"])
    return "%s %s" % (m["source"], _mask(where)) if where else m["source"]


def within(seconds, what, fn, *args):
    """fn(*args) with a deadline: socket timeouts do not cover the name lookup (getaddrinfo blocks as long
    as the resolver takes: a dead nameserver is 5 s per attempt), nor the sum of a connect and several
    reads, so a probe's bound holds only when the whole call is bounded.  It runs in a daemon thread that
    is left behind when it overruns; the process ends without waiting for it."""
    box = {}

    def work():
        try:
            box["value"] = fn(*args)
        except Exception as exc:  # noqa: BLE001 - handed to the caller as it is
            box["error"] = exc

    worker = threading.Thread(target=work, name=what)
    worker.daemon = True
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise OSError("no answer within %g s (%s, name lookup included, did not end)" % (seconds, what))
    if "error" in box:
        raise box["error"]
    return box.get("value")


def probe(m, spec, timeout):
    """Whether a source answers for this model within `timeout` seconds in all (name lookup, connect and
    answer): (True, its ModelScope listing or None) or (False, why).  A 404 means the source is up but
    does not hold the model."""
    try:
        return within(timeout, "the probe of %s" % source_label(m), _probe_once, m, spec, timeout)
    except OSError as exc:
        return False, str(exc)


def _probe_once(m, spec, timeout):
    import urllib.error

    try:
        if m["source"] == "modelscope":
            return True, modelscope_listing(m.get("endpoint"), m["model_id"], m.get("revision") or "master", timeout)
        if m["source"] == "hf":
            with _urlopen("%s/api/models/%s" % ((m.get("endpoint") or HF_DEFAULT).rstrip("/"), spec["repo"]),
                          timeout):
                return True, None
        with _urlopen(m["url"], timeout, method="HEAD"):
            return True, None
    except urllib.error.HTTPError as exc:
        return False, "HTTP %d%s" % (exc.code, " (it does not hold this model)" if exc.code == 404 else "")
    except Exception as exc:  # noqa: BLE001 - every failure is a reading of the network
        reason = getattr(exc, "reason", None) or exc
        text = str(reason)
        if "timed out" in text:
            text = "no answer within %g s" % timeout
        return False, text


def fetch(m, spec, dest, cache, listing=None):
    source = m["source"]
    if source == "hf":
        return fetch_hf(spec, dest, m.get("endpoint"), m.get("revision"), m.get("offline"), cache)
    if source == "modelscope":
        return fetch_modelscope(spec, dest, m["model_id"], m.get("endpoint"), m.get("revision"), listing)
    if source == "url":
        return fetch_layout(spec, dest, m["url"])
    raise ValueError("unknown source %r" % source)


def fetch_auto(m, spec, dest, cache, result):
    """source: auto: each candidate in order (the configured hub, the mirror, ModelScope), the first that
    answers a short probe serves the model; the probes that did not are kept for the report."""
    result["probes"] = []
    for c in m["candidates"]:
        ok, got = probe(c, spec, m.get("probe_timeout") or 5)
        if ok:
            result["served_by"] = source_label(c)
            return fetch(c, spec, dest, cache, got if c["source"] == "modelscope" else None)
        result["probes"].append("%s: %s" % (source_label(c), got))
    raise OSError("no source answered for %s (%s)" % (spec["name"], "; ".join(result["probes"]) or "none to try"))


def _origin(url):
    from urllib.parse import urlsplit

    u = urlsplit(url)
    return u.scheme.lower(), (u.hostname or "").lower(), u.port or {"http": 80, "https": 443}.get(u.scheme.lower())


def _opener():
    """urllib's opener, but a redirect to another scheme, host or port carries no credential: urllib
    copies every header onto the redirected request, so a hub's 302 to its CDN (or anywhere a hostile
    hub likes) would otherwise receive the host's HF token.  huggingface_hub drops it the same way."""
    import urllib.request

    class Redirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req, fp, code, msg, headers, newurl):
            new = urllib.request.HTTPRedirectHandler.redirect_request(self, req, fp, code, msg, headers, newurl)
            if new is not None and _origin(newurl) != _origin(req.full_url):
                for name in list(new.headers):
                    if name.lower() in ("authorization", "cookie", "proxy-authorization"):
                        del new.headers[name]
            return new

    return urllib.request.build_opener(Redirect)


NET_TIMEOUT = 60     # seconds a download may wait for the next bytes before it is an error


def download_resumable(url, part, target, headers=None, total=None, label=None, limit=None):
    """HTTP(S) download into `part`, resumed with a Range request when a previous run left one,
    then moved into place as `target` only when complete.

    No more bytes than expected are ever written: the size the hub listed (`total`), else the
    announced Content-Length, else `limit`; a server that sends more (an endless body, file:///dev/zero
    announcing 0) is cut off and its partial file removed, since resuming it would only add to it."""
    import urllib.request

    os.makedirs(os.path.dirname(part), exist_ok=True)
    have = os.path.getsize(part) if os.path.exists(part) else 0
    if total is not None and have > total:
        have = 0
    hdrs = dict(headers or {})
    if have:
        hdrs["Range"] = "bytes=%d-" % have
    req = urllib.request.Request(url, headers=hdrs)
    with _opener().open(req, timeout=NET_TIMEOUT) as resp:
        if have and getattr(resp, "status", None) != 206:
            have = 0                       # the server ignored the range: start again
        if total is None:
            length = resp.headers.get("Content-Length")
            total = have + int(length) if length and length.strip().isdigit() else None
        if limit is not None and total is not None and total > limit:
            raise OSError("%s: the download is %s, more than the %s it may be" % (
                _mask(url), human_bytes(total), human_bytes(limit)))
        bound = total if total is not None else limit
        check_space(os.path.dirname(target), (bound or 0) - have)
        progress = Throttle(label, bound or 0) if label else None
        if progress:
            progress.add(have)
        written = have
        with open(part, "ab" if have else "wb") as fh:
            for chunk in read_chunks(resp, "%s (run again to resume)" % _mask(url), 1 << 20):
                written += len(chunk)
                if bound is not None and written > bound:
                    fh.close()
                    os.unlink(part)
                    raise OSError("%s: the server sent more than the %s %s; stopped and removed the partial "
                                  "file" % (_mask(url), human_bytes(bound), "expected" if total is not None
                                            else "a download may be"))
                fh.write(chunk)
                if progress:
                    progress.add(len(chunk))
    if total is not None and os.path.getsize(part) != total:
        raise OSError("%s: truncated download (%d of %d bytes); run again to resume" % (
            _mask(url), os.path.getsize(part), total))
    os.replace(part, target)


def fetch_url(url, target, label, limit=None):
    download_resumable(url, target + ".part", target, label=label, limit=limit)


LAYOUT_MAX = 2 << 30       # the layout tarball, and what it unpacks to (the real PP-DocLayoutV3_infer.tar: ~130 MB)
TAR_MEMBERS_MAX = 10000


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _as_ours(member, umask):
    """The member as we write it: our owner, the umask's modes (no setuid, setgid, sticky or group/other
    write from the tar), whatever the tar says; tarfile as root would otherwise apply both."""
    m = copy.copy(member)
    m.uid, m.gid, m.uname, m.gname = os.getuid(), os.getgid(), "", ""
    if m.isdir():
        m.mode = 0o777 & ~umask
    else:
        m.mode = (0o777 if member.mode & 0o100 else 0o666) & ~umask
    return m


def safe_extract(tar_path, dest_parent, limit=None):
    """Extract a tar refusing absolute paths, '..' and links that leave the target, with our owner
    and the umask's modes, and only while what it unpacks to stays under `limit` and fits on the disk:
    the headers are read (and counted) before anything is written, so a gzip bomb is refused whole."""
    limit = LAYOUT_MAX if limit is None else limit
    with tarfile.open(tar_path) as tf:
        members, total = [], 0
        for m in tf:
            members.append(m)
            total += m.size if m.isreg() else 0
            if len(members) > TAR_MEMBERS_MAX:
                raise OSError("%s: more than %d members; refusing it" % (tar_path, TAR_MEMBERS_MAX))
            if total > limit:
                raise OSError("%s unpacks to more than %s, the most a layout model may be; refusing it" % (
                    tar_path, human_bytes(limit)))
        root = os.path.realpath(dest_parent)
        for m in members:
            target = os.path.realpath(os.path.join(dest_parent, m.name))
            if not (target == root or target.startswith(root + os.sep)) or m.issym() or m.islnk() or m.isdev():
                raise OSError("%s: refusing unsafe member %r" % (tar_path, m.name))
        check_space(dest_parent, total, "unpacking %s" % os.path.basename(tar_path))
        umask = _umask()
        ours = [_as_ours(m, umask) for m in members]
        if hasattr(tarfile, "data_filter"):      # Python 3.12, 3.11.4, 3.10.12 and later: its checks too
            def keep_ours(member, path):
                checked = tarfile.data_filter(member, path)
                return checked.replace(mode=member.mode, deep=False) if checked is not None else None

            tf.extractall(dest_parent, members=ours, filter=keep_ours)
        else:
            tf.extractall(dest_parent, members=ours)


def fetch_layout(spec, dest, url, from_path=None):
    parent = os.path.dirname(dest)
    os.makedirs(parent, exist_ok=True)
    tar_path = os.path.join(parent, os.path.basename(dest) + ".tar")
    if from_path:
        if os.path.isdir(from_path):
            copy_tree(from_path, dest, "copy:" + spec["name"])
            return {"lfs": {}, "sizes": {}, "commit": None}
        tar_path = from_path
    else:
        fetch_url(url, tar_path, "download:" + spec["name"], limit=LAYOUT_MAX)
    tmp = dest + ".extracting"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        safe_extract(tar_path, tmp)
        entries = os.listdir(tmp)
        inner = os.path.join(tmp, entries[0]) if len(entries) == 1 and os.path.isdir(os.path.join(tmp, entries[0])) \
            else tmp
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(inner, dest)
        os.chmod(dest, 0o777 & ~_umask())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)      # a refused or failed extraction leaves nothing behind
    return {"lfs": {}, "sizes": {}, "commit": None}


def copy_tree(src, dest, label):
    if not os.path.isdir(src):
        # os.walk of a missing path (or a file) yields nothing: the failure then read as "dest: not a directory"
        raise FileNotFoundError("--from %s: no such directory on this host%s"
                                % (src, "" if os.path.isabs(src) else " (a relative path: give it absolute)"))
    total = dir_bytes(src)
    check_space(dest, total)
    progress = Throttle(label, total)
    for dirpath, dirnames, filenames in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        os.makedirs(os.path.join(dest, rel), exist_ok=True)
        for f in filenames:
            s, d = os.path.join(dirpath, f), os.path.join(dest, rel, f)
            if os.path.exists(d) and os.path.getsize(d) == os.path.getsize(s) and \
                    os.stat(d).st_mtime_ns == os.stat(s).st_mtime_ns:     # copy2 keeps mtime: the same file
                progress.add(os.path.getsize(s))
                continue
            tmp = d + ".ocrdeploy-tmp"
            shutil.copy2(s, tmp)
            os.replace(tmp, d)
            progress.add(os.path.getsize(s))


def run(req):
    out = []
    cache = req.get("cache")
    for m in req["models"]:
        spec, dest = m["spec"], m["dest"]
        result = {"name": spec["name"], "path": dest}
        try:
            with model_lock(dest, spec["name"]):
                _fetch_and_verify(m, spec, dest, cache, req, result)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a clear line in the result
            errno = getattr(exc, "errno", None)
            kind = type(exc).__name__
            msg = str(exc) or kind
            if errno == 28:
                msg = "no space left: " + msg
            result.update({"ok": False, "status": "failed", "problems": ["%s: %s" % (kind, msg)]})
        out.append(result)
    return out


def _fetch_and_verify(m, spec, dest, cache, req, result):
    """Fetch one model from its source (if any) and verify it, under the model's lock."""
    meta = {"lfs": {}, "sizes": {}, "commit": None}
    source = m.get("source", "none")
    if source == "auto":
        meta = fetch_auto(m, spec, dest, cache, result)
    elif source in ("hf", "modelscope", "url"):
        result["served_by"] = source_label(m)
        meta = fetch(m, spec, dest, cache)
    elif source == "local":
        if spec["kind"] == "layout" or m["from"].endswith(".tar"):
            meta = fetch_layout(spec, dest, None, m["from"])
        else:
            copy_tree(m["from"], dest, "copy:" + spec["name"])
    if source == "none":         # copied here already: what was learnt on the way comes along
        meta = {"lfs": m.get("lfs") or {}, "sizes": m.get("sizes") or {}, "commit": m.get("commit")}
    result["commit"] = meta.get("commit")
    result.update(verify(spec, dest, cache, req.get("rehash"), m.get("manifest"), meta["lfs"],
                         meta["sizes"], hub_label=meta.get("hub_label") or "hub LFS metadata"))


def listing(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".cache", QUARANTINE, ".git")]
        for f in filenames:
            full = os.path.join(dirpath, f)
            out[os.path.relpath(full, root)] = _key(full)
    return out


def record(state_path, results):
    """Verified models go into the host's state (serve and verify read their paths from it);
    a model that failed is removed from it, so nothing half-verified is ever served.  Two runs
    record one after the other (read, change, write under a lock), so neither loses the other's."""
    with model_lock(state_path, "state"):
        _record(state_path, results)


def _record(state_path, results):
    try:
        with open(state_path) as fh:
            state = json.load(fh)
    except (OSError, ValueError, RecursionError):
        state = {}
    if not isinstance(state, dict) or not isinstance(state.get("models", {}), dict):
        if os.path.exists(state_path):       # not ours to read: set aside, rebuilt from what is verified now
            os.replace(state_path, "%s.corrupt-%d" % (state_path, int(time.time())))
        state = {}
    models = state.setdefault("models", {})
    for r in results:
        if r.get("ok"):
            models[r["name"]] = {
                "path": r["path"], "kind": r.get("kind"), "verified_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "files": listing(r["path"]), "sha256": {n: f["sha256"] for n, f in r.get("files", {}).items()},
                "checked_against": {n: f["checked_against"] for n, f in r.get("files", {}).items()},
                "manifest": r.get("manifest"), "commit": r.get("commit"), "source": r.get("served_by")}
        else:
            models.pop(r["name"], None)
    os.makedirs(os.path.dirname(state_path), exist_ok=True)
    write_replace(state_path, lambda fh: json.dump(state, fh, indent=2, sort_keys=True))


def main(argv):
    req = json.loads(argv[1])
    results = run(req)
    if req.get("state"):
        record(req["state"], results)
    for r in results:
        for p in r.get("probes") or []:
            sys.stdout.write("%s: probe %s\n" % (r["name"], p))
        if r.get("ok"):
            checked = "; ".join("%s against %s" % (n, ", ".join(f["checked_against"]))
                                for n, f in r.get("files", {}).items()) or "required files present"
            served = ", served by %s" % r["served_by"] if r.get("served_by") else ""
            sys.stdout.write("%s: verified at %s%s (%s)\n" % (r["name"], r["path"], served, checked))
        else:
            for p in r.get("problems", []):
                sys.stdout.write("%s: FAILED: %s\n" % (r["name"], p))
            for q in r.get("quarantined", []):
                sys.stdout.write("%s: moved aside, never served: %s\n" % (r["name"], q))
    sys.stdout.write(MARKER + "\n" + json.dumps(results) + "\n")
    sys.stdout.flush()
    sys.exit(0 if all(r.get("ok") for r in results) else 1)


if __name__ == "__main__":
    main(sys.argv)
