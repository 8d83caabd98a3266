"""The log scanner: known failures, harmless noise and unexplained errors in a log.

Standard library only: this file also runs on a remote host (``python3 -c`` with
the rules as JSON) so that only the findings travel back.

How it stays fast on multi-GB logs: every rule carries literals, one of which is
in any line it can match.  A multi-string search finds the few lines holding one
of them: GNU grep (-F, Aho-Corasick/Commentz-Walter in C) streaming the file,
or, where there is no grep, a Python loop over large chunks.  Only those lines
(and their context) reach the regexes.  Nothing is read into memory whole.
"""

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARKER = "@@OCRDEPLOY-DIAGNOSE@@"
STAGE_ORDER = ("install", "compile", "start", "parse", "client")
MAX_LINE = 16384          # a line is cut here before matching and reporting
MAX_CANDIDATES = 2000000  # lines past this many candidates are counted, not examined
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\^\[\[[0-9;]*m")
LEVEL = re.compile(r"(?<![\w/.-])(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)(?![\w/.-])")
GENERIC = re.compile(
    r"Traceback \(most recent call last\)"
    r"|(?<![\w.])(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)(?::|\s*$)"
    r"|(?i:(?<![\w-])error(?:\[E\d+\])?:)"
    r"|(?<![\w-])(?:FAILED|FATAL|Fatal error):"
    r"|(?i:\bfatal error\b)")
GENERIC_LITERALS = ("traceback (most recent call last)", "error", "exception", "failed:", "fatal")
TRACEBACK = "Traceback (most recent call last)"
EXC_LINE = re.compile(r"(?<![\w.])((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt|Exit))(?::\s*(.*))?$")


class CompiledRule(object):
    __slots__ = ("id", "stage", "severity", "patterns", "literals", "unless", "levels", "not_levels",
                 "overrides")

    def __init__(self, d):
        self.id = d["id"]
        self.stage = d["stage"]
        self.severity = d.get("severity", "error")
        self.patterns = [re.compile(p) for p in d["patterns"]]
        self.literals = [s.lower() for s in d["literals"]]
        self.unless = [re.compile(p) for p in d.get("unless") or ()]
        self.levels = set(d.get("levels") or ())
        self.not_levels = set(d.get("not_levels") or ())
        self.overrides = set(d.get("overrides") or ())


def line_level(text):
    m = LEVEL.search(text, 0, 120)
    if not m:
        return None
    lv = m.group(1)
    return {"WARN": "WARNING", "FATAL": "CRITICAL"}.get(lv, lv)


def clean(raw):
    """Bytes of one line -> the text segments to match (ANSI stripped, CR rewrites split)."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if len(text) > MAX_LINE:
        text = text[:MAX_LINE]
    text = ANSI.sub("", text.rstrip("\n"))
    if "\r" in text:
        segs = [s for s in text.split("\r") if s.strip()]
        return segs or [""]
    return [text]


# ------------------------------------------------------------ candidate lines

def _bounded_lines(stream):
    """Lines of a binary stream, each cut at MAX_LINE bytes (the rest of a long line is skipped)."""
    while True:
        line = stream.readline(MAX_LINE)
        if not line:
            return
        if not line.endswith(b"\n") and len(line) >= MAX_LINE:
            while True:
                rest = stream.readline(1 << 20)
                if not rest or rest.endswith(b"\n"):
                    break
        yield line


def grep_candidates(path, literals, context):
    """Candidate lines through grep -F; yields (lineno, is_match, raw bytes)."""
    grep = shutil.which("grep")
    fd, litfile = tempfile.mkstemp(prefix="ocrdeploy-lits-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(("\n".join(sorted(set(literals))) + "\n").encode("utf-8"))
        argv = [grep, "-a", "-n", "-i", "-F", "-f", litfile]
        if context:
            argv += ["-B", str(context), "-A", str(context)]
        env = dict(os.environ, LC_ALL="C")
        feeder = None
        if path == "-":
            proc = subprocess.Popen(argv + ["-"], stdin=sys.stdin.buffer if hasattr(sys.stdin, "buffer") else None,
                                    stdout=subprocess.PIPE, env=env)
        elif path.endswith(".gz"):
            feeder = subprocess.Popen(["gzip", "-dc", "--", path], stdout=subprocess.PIPE)
            proc = subprocess.Popen(argv + ["-"], stdin=feeder.stdout, stdout=subprocess.PIPE, env=env)
            feeder.stdout.close()
        else:
            proc = subprocess.Popen(argv + ["--", path], stdout=subprocess.PIPE, env=env)
        for line in _bounded_lines(proc.stdout):
            if line.startswith(b"--") and line.strip() == b"--":
                continue
            i = 0
            while i < len(line) and 48 <= line[i] <= 57:
                i += 1
            if i == 0 or i >= len(line):
                continue
            yield int(line[:i]), line[i:i + 1] == b":", line[i + 1:]
        proc.stdout.close()
        rc = proc.wait()
        if feeder is not None and feeder.wait() != 0:
            raise IOError("gzip could not decompress %s" % path)
        if rc > 1:
            raise IOError("grep failed on %s (exit code %d)" % (path, rc))
    finally:
        os.unlink(litfile)


def python_candidates(path, literals, context):
    """The same as grep_candidates without grep: a chunked literal search in Python."""
    alternation = re.compile(b"|".join(re.escape(s.encode("utf-8")) for s in
                                       sorted(set(literals), key=len, reverse=True)))
    if path == "-":
        stream = sys.stdin.buffer
    elif path.endswith(".gz"):
        stream = gzip.open(path, "rb")
    else:
        stream = open(path, "rb")
    before = []          # the last `context` lines, (lineno, raw)
    after_left = 0
    lineno = 0
    try:
        for raw in _bounded_lines(stream):
            lineno += 1
            if alternation.search(raw.lower()):
                for n, r in before:
                    yield n, False, r
                before = []
                yield lineno, True, raw
                after_left = context
            elif after_left:
                after_left -= 1
                yield lineno, False, raw
            elif context:
                before.append((lineno, raw))
                if len(before) > context:
                    before.pop(0)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


# ------------------------------------------------------------ matching

def match_line(rules, segs):
    """Rules matching any segment of one line, after `unless`, levels and overrides."""
    hits = {}
    for seg in segs:
        low = seg.lower()
        level = None
        level_known = False
        for rule in rules:
            if rule.id in hits:
                continue
            for lit in rule.literals:
                if lit in low:
                    break
            else:
                continue
            if rule.levels or rule.not_levels:
                if not level_known:
                    level, level_known = line_level(seg), True
                if rule.levels and level not in rule.levels:
                    continue
                if level in rule.not_levels:
                    continue
            if any(u.search(seg) for u in rule.unless):
                continue
            if any(p.search(seg) for p in rule.patterns):
                hits[rule.id] = rule
    if len(hits) > 1:
        dropped = set()
        for rule in hits.values():
            dropped |= rule.overrides
        for rid in dropped:
            hits.pop(rid, None)
    return list(hits.values())


def _norm(text):
    return re.sub(r"0x[0-9a-fA-F]+|\d+", "#", text.strip())[:300]


def scan(path, rules, context=2, engine="auto"):
    """Scan one log; returns a JSON-serialisable report."""
    compiled = [r if isinstance(r, CompiledRule) else CompiledRule(r) for r in rules]
    literals = set(GENERIC_LITERALS)
    for r in compiled:
        literals.update(r.literals)
    if engine == "auto":
        engine = "grep" if shutil.which("grep") and (not path.endswith(".gz") or shutil.which("gzip")) else "python"
    source = grep_candidates if engine == "grep" else python_candidates

    lines = {}            # lineno -> cleaned text, for context (only near candidates)
    findings = {}         # rule id -> dict
    known_lines = []      # line numbers of error/warning findings
    generic = []          # (lineno, text) lines that look like errors
    examined = 0
    for lineno, is_match, raw in source(path, literals, context):
        segs = clean(raw)
        lines[lineno] = " | ".join(segs) if len(segs) > 1 else segs[0]
        if not is_match:
            continue
        examined += 1
        if examined > MAX_CANDIDATES:
            continue
        hits = match_line(compiled, segs)
        for rule in hits:
            f = findings.get(rule.id)
            if f is None:
                f = findings[rule.id] = {"id": rule.id, "stage": rule.stage, "severity": rule.severity,
                                         "count": 0, "first_line": lineno, "last_line": lineno,
                                         "text": lines[lineno]}
            f["count"] += 1
            f["last_line"] = lineno
        if any(r.severity != "harmless" for r in hits):
            known_lines.append(lineno)
        elif not hits or all(r.severity == "harmless" for r in hits):
            text = lines[lineno]
            if not hits and GENERIC.search(text):
                generic.append((lineno, text))
            elif not hits and line_level(text) in ("ERROR", "CRITICAL"):
                generic.append((lineno, text))

    def ctx(first):
        return [[n, lines[n]] for n in range(first - context, first + context + 1) if n in lines]

    for f in findings.values():
        f["context"] = ctx(f["first_line"])
    unrecognised = _unrecognised(generic, known_lines, ctx)
    ordered = sorted(findings.values(), key=lambda f: (STAGE_ORDER.index(f["stage"]) if f["stage"] in STAGE_ORDER
                                                      else 99, f["first_line"]))
    return {
        "file": path,
        "engine": engine,
        "candidates": examined,
        "truncated": examined > MAX_CANDIDATES,
        "findings": [f for f in ordered if f["severity"] != "harmless"],
        "harmless": [f for f in ordered if f["severity"] == "harmless"],
        "unrecognised": unrecognised,
    }


def _unrecognised(generic, known_lines, ctx):
    """Error-looking lines no entry explains, as blocks (a traceback is one block), repeats grouped."""
    known = sorted(set(known_lines))
    blocks = []
    cur = None
    for lineno, text in generic:
        joins = cur is not None and (lineno - cur["end"] <= 3 or (cur["traceback"] and not cur["closed"]
                                                                  and lineno - cur["end"] <= 200))
        if not joins:
            cur = {"start": lineno, "end": lineno, "lines": [], "traceback": False, "closed": False}
            blocks.append(cur)
        cur["end"] = lineno
        cur["lines"].append((lineno, text))
        if TRACEBACK in text:
            cur["traceback"], cur["closed"] = True, False
        elif cur["traceback"] and EXC_LINE.search(text.strip()):
            cur["closed"] = True
    import bisect

    groups = {}
    for b in blocks:
        i = bisect.bisect_left(known, b["start"] - 2)
        if i < len(known) and known[i] <= b["end"] + 5:
            continue  # a known finding explains this block
        summary_line, summary = b["lines"][0]
        for n, t in b["lines"]:
            if EXC_LINE.search(t.strip()) and TRACEBACK not in t:
                summary_line, summary = n, t
        key = _norm(summary)
        g = groups.get(key)
        if g is None:
            groups[key] = {"first_line": summary_line, "count": 1, "text": summary,
                           "block": [b["start"], b["end"]], "context": ctx(summary_line)}
        else:
            g["count"] += 1
    return sorted(groups.values(), key=lambda g: g["first_line"])


def main(argv):
    req = json.loads(argv[1])
    out = []
    for path in req["paths"]:
        try:
            out.append(scan(path, req["rules"], req.get("context", 2), req.get("engine", "auto")))
        except (IOError, OSError) as exc:
            out.append({"file": path, "error": str(exc)})
    sys.stdout.write(MARKER + "\n" + json.dumps(out) + "\n")


if __name__ == "__main__":
    main(sys.argv)
