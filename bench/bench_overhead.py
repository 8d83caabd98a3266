"""The bench's own cost per request: the same SDK-shaped streamed request sent N times bare (one httpx
client, read to the end of the stream) and N times through `inv bench`'s loop at concurrency 1.

    .venv/bin/python bench/bench_overhead.py URL MODEL [BACKEND] [N]

Prints both medians and their difference (what the bench adds: asyncio, SSE parsing, scoring is after the
clock stops).  Not a test: figures depend on the machine.
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
direct = []
with httpx.Client(base_url=url, timeout=600, trust_env=False) as client:
    for _ in range(n + 1):
        t = time.perf_counter()
        with client.stream("POST", "/v1/chat/completions", json=body) as r:
            for _ in r.iter_lines():
                pass
        direct.append(time.perf_counter() - t)
direct = direct[1:]                 # the first warms the connection and the server
doc = bench.run(url, [page], levels=(1,), requests=n, warmup=1, model=model, backend=backend, max_tokens=24)
lv = doc["levels"][0]
d = statistics.median(direct) * 1000
print(f"direct request p50 {d:.1f} ms; through the bench E2EL p50 {lv['e2el_ms']['p50']:.1f} ms; "
      f"overhead {lv['e2el_ms']['p50'] - d:+.1f} ms per request; bench CPU {lv['controller_cpu_s']:.3f} s "
      f"for {lv['requests']} requests; pages/min {lv['pages_per_min']}")
