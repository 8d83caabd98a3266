"""Scanner speed against GNU grep on a large vLLM-like log.

Usage: python bench/diagnose_scan.py LOG [--repeat 3] [--naive-mib 64]

Compares, on the same file (warm page cache, median of --repeat runs):
  - baseline: `grep -c -E -i -f patterns` with the table's patterns turned into ERE
  - ocrdeploy's scan with the hyperscan literal prefilter (the default engine on the controller)
  - ocrdeploy's scan with the grep -F literal prefilter (remote hosts; fallback)
  - ocrdeploy's scan with its pure-Python fallback engine
  - alternatives measured to choose the engine: pyahocorasick, google-re2 Set and
    hyperscan literal prefilters, and a naive alternation of all patterns in Python's
    re over mmap (on the first --naive-mib MiB only, scaled up).
"""

from __future__ import annotations

import argparse
import mmap
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ocrdeploy.diagnose import scanner  # noqa: E402
from ocrdeploy.diagnose.engine import wire_rules  # noqa: E402
from ocrdeploy.diagnose.table import load_table  # noqa: E402


def _drop_lookarounds(p: str) -> str:
    """The pattern without its negative look-aheads and look-behinds (ERE has none; grep then matches a little more),
    nested groups and classes included.  A positive one is a requirement: it stays, and to_ere() gives up."""
    out, i = [], 0
    while i < len(p):
        if p.startswith(("(?!", "(?<!"), i):
            depth, j, in_class = 0, i, False
            while j < len(p):
                c = p[j]
                if c == "\\":
                    j += 2
                    continue
                if in_class:
                    in_class = c != "]"
                elif c == "[":
                    in_class = True
                    if p[j + 1:j + 2] == "]":
                        j += 1
                elif c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            i = j + 1
            continue
        if p[i] == "\\":
            out.append(p[i:i + 2])
            i += 2
            continue
        out.append(p[i])
        i += 1
    return "".join(out)


# Python's class escapes in ERE: outside a bracket expression each becomes one; inside one, its class name joins the
# expression ([^\\s'"] -> [^[:space:]'"]: "[[:space:]]" there would end the bracket early and grep refuses the file)
_OUTSIDE = {"d": "[0-9]", "s": "[[:space:]]", "S": "[^[:space:]]", "w": "[[:alnum:]_]", "W": "[^[:alnum:]_]"}
_INSIDE = {"d": "0-9", "s": "[:space:]", "w": "[:alnum:]_"}


def _bracket(p: str, i: int) -> tuple[str | None, int]:
    """The bracket expression opening at p[i] as ERE, and the index after it.  ERE has no escapes inside brackets:
    a literal "]" must come first and a literal "-" last, a backslash is itself; grep's lines hold no newline, so a
    "\\n" in the class is dropped (and a negated class of nothing else is any character)."""
    j = i + 1
    neg = p.startswith("^", j)
    j += neg
    body, rbracket, hyphen = [], False, False
    first = True
    while j < len(p):
        c = p[j]
        if c == "]" and not first:
            break
        first = False
        if c == "\\" and j + 1 < len(p):
            e = p[j + 1]
            j += 2
            if e in _INSIDE:
                body.append(_INSIDE[e])
            elif e in "SWD":
                return None, j
            elif e == "]":
                rbracket = True
            elif e == "-":
                hyphen = True
            elif e == "n":
                continue
            elif e == "t":
                body.append("\t")
            else:
                body.append(e)
            continue
        if c == "]":
            rbracket = True
        else:
            body.append(c)
        j += 1
    else:
        return None, j
    text = "".join(body)
    if not text and not rbracket and not hyphen:
        return ("." if neg else None), j + 1
    return "[" + "^" * neg + "]" * rbracket + text + "-" * hyphen + "]", j + 1


def to_ere(p: str) -> str | None:
    """The pattern as GNU grep's ERE, or None where ERE cannot say it (a positive look-around, a negated class
    escape inside brackets): the baseline then leaves that pattern out, and says how many it kept."""
    p = _drop_lookarounds(p.replace("(?i)", "")).replace("(?:", "(")
    out, i = [], 0
    while i < len(p):
        c = p[i]
        if c == "\\" and i + 1 < len(p):
            out.append(_OUTSIDE.get(p[i + 1], p[i:i + 2]))
            i += 2
        elif c == "[":
            part, i = _bracket(p, i)
            if part is None:
                return None
            out.append(part)
        else:
            out.append(c)
            i += 1
    p = "".join(out)
    return None if "(?" in p else p


def median_time(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--grep-timeout", type=float, default=300.0,
                    help="seconds the grep baseline may run before it is stopped (the ratios are then upper bounds)")
    ap.add_argument("--naive-mib", type=int, default=64,
                    help="MiB of the log the naive comparisons read (0: skip them)")
    args = ap.parse_args()
    if args.naive_mib < 0:
        ap.error("--naive-mib must be 0 (skip the comparisons) or more")
    rules = load_table()
    wire = wire_rules(rules)
    size = os.path.getsize(args.log)
    pats = [to_ere(p) for r in rules for p in r.patterns]
    ere = [p for p in pats if p]
    with tempfile.NamedTemporaryFile("w", suffix=".pat", delete=False) as fh:
        fh.write("\n".join(ere) + "\n")
        patfile = fh.name
    subprocess.run(["cat", args.log], stdout=subprocess.DEVNULL)  # warm the page cache
    print(f"log: {size / 2**20:.0f} MiB, {len(rules)} entries, {len(ere)} of {len(pats)} patterns as ERE; "
          f"{os.cpu_count()} CPUs")

    def grep_baseline():
        res = subprocess.run(["grep", "-c", "-E", "-i", "-f", patfile, args.log], capture_output=True, text=True,
                             env=dict(os.environ, LC_ALL="C"), timeout=args.grep_timeout)
        if res.returncode == 2:
            # a refused pattern file ends grep at once: a "ratio" against that would be a lie
            sys.exit(f"grep refused the patterns: {res.stderr.strip()}")
        return res.stdout.strip()

    # GNU grep builds one DFA for the union of the patterns; with the table's bounded repetitions ({0,300}) over
    # broad classes that DFA can grow without end, so the baseline is bounded: stopped, its time is a lower bound
    # and every ratio below an upper bound ("<")
    try:
        t_grep, count = median_time(grep_baseline, args.repeat)
        less = ""
        print(f"grep -c -E -i -f patterns (LC_ALL=C): {t_grep:.2f} s ({size / t_grep / 2**20:.0f} MiB/s), "
              f"{count} lines")
    except subprocess.TimeoutExpired:
        t_grep, less = args.grep_timeout, "<"
        print(f"grep -c -E -i -f patterns (LC_ALL=C): over {t_grep:.0f} s (stopped; the ratios below are upper "
              "bounds)")
    # (GNU grep's speed in a UTF-8 locale swings both ways with the log: 10x faster on the error-dense log, 100x
    # slower on the vLLM-like one; shown for reference, bounded so that it cannot hold the bench up)
    bound = min(max(30.0, 10 * t_grep), args.grep_timeout)
    try:
        t_utf8, _ = median_time(lambda: subprocess.run(["grep", "-c", "-E", "-i", "-f", patfile, args.log],
                                                       capture_output=True, env=dict(os.environ, LC_ALL="C.UTF-8"),
                                                       timeout=bound), 1)
        print(f"  the same in a UTF-8 locale: {t_utf8:.2f} s")
    except subprocess.TimeoutExpired:
        print(f"  the same in a UTF-8 locale: over {bound:.0f} s (stopped)")

    if scanner.hyperscan is not None:
        t_hs, rep = median_time(lambda: scanner.scan(args.log, wire, engine="hyperscan"), args.repeat)
        print(f"ocrdeploy scan, hyperscan prefilter (default here): {t_hs:.2f} s = {less}{t_hs / t_grep:.3g}x grep; "
              f"{rep['candidates']} candidate lines, {len(rep['findings'])} findings, "
              f"{len(rep['unrecognised'])} unrecognised")
    else:
        print("ocrdeploy scan, hyperscan prefilter: hyperscan not importable")
    # The grep -F and Python engines run where hyperscan is not there (scanner.py alone on a remote host):
    # measured so, with hyperscan hidden from the per-line rule index too.
    saved, scanner.hyperscan = scanner.hyperscan, None
    try:
        t_scan, rep = median_time(lambda: scanner.scan(args.log, wire, engine="grep"), args.repeat)
        print(f"ocrdeploy scan, grep -F prefilter (no hyperscan, as on a remote host): {t_scan:.2f} s = "
              f"{less}{t_scan / t_grep:.3g}x grep; {rep['candidates']} candidate lines, "
              f"{len(rep['findings'])} findings, "
              f"{len(rep['unrecognised'])} unrecognised")
        t_py, _ = median_time(lambda: scanner.scan(args.log, wire, engine="python"), 1)
        print(f"ocrdeploy scan, Python fallback engine (no hyperscan): {t_py:.2f} s = {less}{t_py / t_grep:.3g}x grep")
    finally:
        scanner.hyperscan = saved

    if args.naive_mib == 0 or size == 0:
        # (nothing to sample: the comparisons below scale a sample up to the whole file)
        print("naive comparisons: skipped (--naive-mib 0 or an empty log)")
        os.unlink(patfile)
        return
    literals = sorted({lit for r in wire for lit in r["literals"]} | set(scanner.GENERIC_LITERALS))
    with open(args.log, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        n = min(size, args.naive_mib * 2**20)
        chunk = mm[:n]
    scale = size / n
    try:
        import ahocorasick

        auto = ahocorasick.Automaton()
        for lit in literals:
            auto.add_word(lit, lit)
        auto.make_automaton()

        def aho():
            return sum(1 for _ in auto.iter(chunk.decode("latin-1").lower()))

        t, _ = median_time(aho, 1)
        print(f"pyahocorasick literal prefilter (decode+lower+iter): ~{t * scale:.2f} s for the whole file")
    except ImportError:
        print("pyahocorasick: not installed")
    try:
        import hyperscan

        db = hyperscan.Database()
        db.compile(expressions=[re.escape(lit).encode() for lit in literals],
                   ids=list(range(len(literals))), flags=[hyperscan.HS_FLAG_CASELESS] * len(literals))
        hits = []
        t, _ = median_time(lambda: db.scan(chunk, match_event_handler=lambda *a: hits.append(a[2])), 1)
        print(f"hyperscan literal prefilter: ~{t * scale:.2f} s for the whole file ({len(hits)} hits in sample)")
    except Exception as exc:  # noqa: BLE001 - optional comparison only
        print(f"hyperscan: {type(exc).__name__}: {exc}")
    naive = re.compile("|".join(f"(?:{p})" for r in rules for p in r.patterns if "(?i)" not in p).encode(),
                       re.MULTILINE)
    t, _ = median_time(lambda: sum(1 for _ in naive.finditer(chunk)), 1)
    print(f"naive alternation of all patterns in Python re over mmap: ~{t * scale:.2f} s = "
          f"{t * scale / t_grep:.1f}x grep")
    os.unlink(patfile)


if __name__ == "__main__":
    main()
