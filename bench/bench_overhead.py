"""The bench's own cost per request: the same SDK-shaped streamed request sent bare (one httpx client, read
to the end of the stream) and through `inv bench`'s loop (one request, concurrency 1), alternately, N pairs.

    .venv/bin/python bench/bench_overhead.py URL MODEL [BACKEND] [N]

Alternating pairs, not two runs one after the other: on a shared machine the load moves between runs more
than the bench costs, so each bench request is compared with the direct one just before it (median of the
pair differences).  Prints that, both medians, and the bench's CPU per request.  Not a test: figures depend
on the machine.
"""

import statistics
import sys
import time

import httpx

from ocrdeploy.sdk import bench, pages

url, model = sys.argv[1], sys.argv[2]
backend = sys.argv[3] if len(sys.argv) > 3 else "transformers"
n = int(sys.argv[4]) if len(sys.argv) > 4 else 9
page = pages.sample_pages()[0]
body = bench.request_body(page, model=model, max_tokens=24, extra=bench.extra_body(backend))
direct, through, cpu = [], [], 0.0
with httpx.Client(base_url=url, timeout=600, trust_env=False) as client:
    for i in range(n + 1):
        t = time.perf_counter()
        with client.stream("POST", "/v1/chat/completions", json=body) as r:
            for _ in r.iter_lines():
                pass
        d = time.perf_counter() - t
        doc = bench.run(url, [page], levels=(1,), requests=1, warmup=0, model=model, backend=backend, max_tokens=24)
        lv = doc["levels"][0]
        if i:                   # the first pair warms the connection and the server
            direct.append(d * 1000)
            through.append(lv["e2el_ms"]["p50"])
            cpu += lv["controller_cpu_s"]
diffs = [b - a for a, b in zip(direct, through)]
print(f"{n} pairs: direct p50 {statistics.median(direct):.1f} ms; through the bench E2EL p50 "
      f"{statistics.median(through):.1f} ms; overhead (median of pair differences) {statistics.median(diffs):+.1f} ms "
      f"per request (pair differences min {min(diffs):+.1f}, max {max(diffs):+.1f}); bench CPU "
      f"{cpu / n * 1000:.1f} ms per request (the level's, scoring included)")
