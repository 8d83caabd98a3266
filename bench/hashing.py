"""sha256 speed of the model verifier against openssl, across cores, and from the cache.

Usage: python bench/hashing.py [--gib 1] [--dir /tmp]

Writes test files (random data) once, warms the page cache, then times (median of 3):
  - `openssl dgst -sha256` and `sha256sum` on one file, against hostside.sha256_file
  - two files one after the other, against hash_files with 2 workers
  - an unchanged file re-verified through the (path, size, mtime_ns, inode) cache
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ocrdeploy.models import hostside  # noqa: E402

hostside.progress_hook = lambda *a: None


def median(fn, n=3):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def make(path: Path, size: int):
    if path.exists() and path.stat().st_size == size:
        return
    with open(path, "wb") as fh:
        left = size
        block = os.urandom(64 << 20)
        while left > 0:
            fh.write(block[: min(left, len(block))])
            left -= len(block)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    size = int(args.gib * 2**30)
    d = Path(args.dir) / "ocrdeploy-hash-bench"
    d.mkdir(exist_ok=True)
    a, b = d / "a.bin", d / "b.bin"
    make(a, size)
    make(b, size)
    for f in (a, b):
        subprocess.run(["cat", str(f)], stdout=subprocess.DEVNULL)
    print(f"{os.cpu_count()} CPUs; files of {size / 2**30:.2f} GiB in {d} (page cache warm)")
    t_ssl = median(lambda: subprocess.run(["openssl", "dgst", "-sha256", str(a)], capture_output=True, check=True))
    t_sum = median(lambda: subprocess.run(["sha256sum", str(a)], capture_output=True, check=True))
    t_ours = median(lambda: hostside.sha256_file(str(a)))
    print(f"openssl dgst -sha256: {t_ssl:.2f} s; sha256sum: {t_sum:.2f} s; ocrdeploy: {t_ours:.2f} s "
          f"= {t_ssl / t_ours:.2f}x openssl's throughput")
    t_seq = median(lambda: [hostside.sha256_file(str(a)), hostside.sha256_file(str(b))])
    t_par = median(lambda: hostside.hash_files([str(a), str(b)], None, workers=2))
    print(f"two files: one after the other {t_seq:.2f} s, in parallel (2 workers) {t_par:.2f} s "
          f"= {t_seq / t_par:.2f}x")
    cache = d / "cache.json"
    hostside.hash_files([str(a)], str(cache), rehash=True)
    t_cached = median(lambda: hostside.hash_files([str(a)], str(cache)), 5)
    print(f"unchanged file re-verified from the cache: {t_cached * 1000:.3f} ms (in-process; the whole `inv models --verify-only` command adds interpreter start-up)")
    if "--keep" not in sys.argv:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
