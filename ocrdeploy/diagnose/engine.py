"""Run the scanner where the log is: in-process for local files, on the host over SSH.

A remote scan sends the scanner (stdlib only) and the compact rules in one
command and brings back only the findings; the log itself never travels.
Both travel on the command's stdin, not its command line: over SSH the whole
command is one string that the host's shell gets as one argument, and Linux
refuses any single argument over 128 KiB (MAX_ARG_STRLEN, "Argument list too
long"), a size the quoted scanner and table together had passed.
Causes and fixes are attached here, on the controller, with the host's paths
filled in.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import HostError, UsageError
from ..terminal import COLOUR
from ..provision.command import remote_python
from . import leadmodel
from . import scanner as scanner_module
from .table import Rule, fill

WIRE_FIELDS = ("id", "stage", "severity", "patterns", "literals", "unless", "levels", "not_levels", "overrides",
               "preceded_by", "followed_by", "within", "reset_by", "context_on_line",
               "retried_by")


# runs the scanner as `python3 -c SCANNER REQUEST` would (as __main__, with the request as sys.argv[1]),
# both read from stdin
SCAN_LOADER = """\
import json, sys
payload = json.loads(sys.stdin.read())
sys.argv = ["ocrdeploy-scanner", payload["request"]]
exec(compile(payload["source"], "ocrdeploy-scanner", "exec"))
"""


def wire_rules(rules: list[Rule]) -> list[dict]:
    return [{k: getattr(r, k) for k in WIRE_FIELDS} for r in rules]


def scan_local(paths, rules, *, context=2, engine="auto", services=None, service_name=None,
               documents=False) -> list[dict]:
    """`documents`: whether a log the user gave to read (`inv diagnose --log`) may be judged a text about errors
    (scanner.judge_document); never a log ocrdeploy's own runs wrote."""
    return scanner_module.run_request({"paths": list(paths), "rules": wire_rules(rules), "context": context,
                                       "engine": engine, "services": services, "service_name": service_name,
                                       "ansi": COLOUR.pattern, "documents": documents})


def scan_remote(conn, paths, rules, *, context=2, services=None, service_name=None, timeout=3600) -> list[dict]:
    if "-" in paths:
        raise UsageError("--log - (stdin) only works for a local scan, not with --host")
    request = {"paths": list(paths), "rules": wire_rules(rules), "context": context, "engine": "auto",
               "services": services, "service_name": service_name, "ansi": COLOUR.pattern}
    source = Path(scanner_module.__file__).read_text(encoding="utf-8")
    payload = json.dumps({"source": source, "request": json.dumps(request)})
    result = conn.run(remote_python(SCAN_LOADER, "-", "log scanner", show_argument=True, stdin=payload),
                      timeout=timeout, ok_codes=range(0, 256))
    if scanner_module.MARKER not in result.stdout:
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise HostError(conn.name, f"remote scan failed (exit code {result.exit_code}): {' | '.join(tail)}")
    try:
        return json.loads(result.stdout.split(scanner_module.MARKER, 1)[1].strip().splitlines()[0])
    except (ValueError, IndexError):
        raise HostError(conn.name, "remote scan answered something that is not a scan report")


def fix_context(host=None, facts: dict | None = None, port=None) -> dict:
    """Values for the {placeholders} of causes and fixes, from the host's vars where known; `port` is the
    service's own when the log is one service's (an instance on --port 8001 or the second of --instances 2 is
    not on the host's default port, and a fix that names the default sends the user to the wrong socket)."""
    hv = dict(host.vars) if host is not None else {}
    workdir = hv.get("workdir") or (host.workdir if host is not None else "~/ocrdeploy")
    if facts and facts.get("workdir", {}).get("path"):
        workdir = facts["workdir"]["path"]
    vllm_env = hv.get("vllm_env") or f"{workdir}/vllm-ocr-env"
    ctx = {
        "workdir": workdir,
        "vllm_env": vllm_env,
        "sdk_env": hv.get("sdk_env") or f"{workdir}/sdk-env",
        "tf_env": hv.get("tf_env") or f"{workdir}/tf-ocr-env",
        "cu13": hv.get("cu13") or f"{vllm_env}/lib/python3.13/site-packages/nvidia/cu13",
        "port": str(port or hv.get("port") or 18499),
    }
    for key in ("transformers_src", "vllm_src", "deps_dir"):
        if hv.get(key):
            ctx[key] = hv[key]
    if "deps_dir" not in ctx and "vllm_src" in ctx:
        ctx["deps_dir"] = f"{ctx['vllm_src']}/.deps"
    return ctx


def with_home(ctx: dict, home: str) -> dict:
    """The context with `~/...` paths made absolute with the host's home: a remedy's argv is quoted
    word by word, so a shell never expands the `~` of the default workdir (`~/ocrdeploy`)."""
    if not home or not home.startswith("/"):
        return dict(ctx)
    home = home.rstrip("/") or "/"
    out = {}
    for key, value in ctx.items():
        if isinstance(value, str) and (value == "~" or value.startswith("~/")):
            value = home + value[1:] if home != "/" else "/" + value[2:]
        out[key] = value
    return out


# Words every failure shares: they say nothing about which entry is near.
_COMMON = set("""error errors failed fail failure fatal cannot could not found with from this that the and for line
file files exception traceback most recent call last warning info debug none true false python site packages lib
lib64 usr local home root self return raise code exit status killed signal process module named import value type
runtime runtimeerror valueerror oserror importerror modulenotfounderror while when into have has was were are
been unable invalid missing does support supported available using use version versions build building make
install installing installed running run main bin tmp env venv pip setup shared object directory such
requirements txt command complete successfully solve output above note see lines following exited""".split())
# words, and numbers of three digits or more: an exit status (137) or an error's number (209) is a key token
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_+-]{2,}|(?<![\w.])\d{3,}(?![\w.])")


# (round scan14) a CamelCase identifier (an exception class, an error enum, a Java or .NET type) also gives its parts:
# "IndexOutOfBoundsException" says "index" and "bounds", "cudaErrorSymbolNotFound" says "symbol", words an entry's
# patterns and cases spell apart.  (Tuned on the named misses of batches 1-91 reported unrecognised: top entry right
# 146 -> 149 of 279, right entry in the lead 197 -> 201; weights and priors unchanged, their plateau the same.)
_CAMEL_TOKEN = re.compile(r"\b[A-Za-z]*[a-z][A-Z][A-Za-z]*\b")
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]{2,}|[A-Z]{2,}(?=[A-Z][a-z]|\b|\d)")


# (round scan15) and an identifier joined by underscores or hyphens gives its parts the same way: "CMAKE_C_COMPILER" says
# "cmake" and "compiler", "CUDA_ERROR_NO_DEVICE" "device", "llama-cpp-python" "llama" and "python",
# "subprocess-exited-with-error" "subprocess" (numbers are not parts: "cu121", "3-11" say nothing of a failure); and
# "exited", which pip's "subprocess-exited-with-error" now gives every build entry's cases, is a common word as "exit" is.
# (Tuned on the named misses of batches 1-96 reported unrecognised: top entry right 156 -> 159 of 284, in the top three
# of the first line's lead 200 -> 208, in the lead 203 -> 212; batches 97-102, held out for the lead: 12 -> 13,
# 15 -> 16, 20 -> 21 of 31.  CASE_WEIGHT 6-10, DF_POWER 0.5-0.7, CONTEXT_WEIGHT 0.5-1.0 with the split: 153-160, the
# shipped 8/0.6/0.75 at 159.)
_JOINED_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)+")
_JOINED_SEP = re.compile(r"[_-]")


def _words(text: str) -> set:
    out = {w.lower().strip("-+_") for w in _WORD.findall(text)}
    if any(c.isupper() for c in text):
        for tok in _CAMEL_TOKEN.findall(text):
            out.update(p.lower() for p in _CAMEL_PART.findall(tok))
    if "_" in text or "-" in text:
        for tok in _JOINED_TOKEN.findall(text):
            out.update(p.lower() for p in _JOINED_SEP.split(tok) if not p.isdigit())
    return out - _COMMON - {""}


def _lead_word(w: str) -> bool:
    return len(w) >= 4 or w.isdigit()


def _entry_words(rule: Rule) -> set:
    # (round scan10) and the words of the entry's own name, which says what failed in the table's words ("busy" of
    # gpu-busy-memory for "all CUDA-capable devices are busy or unavailable", "address" of bind-address-unavailable)
    # where its patterns spell another wording of the same failure
    out = _words(rule.id.replace("-", " "))
    for lit in rule.literals:
        out |= _words(lit)
    for pattern in rule.patterns:
        out |= _words(re.sub(r"\\[A-Za-z]|\(\?[A-Za-z]+\)", " ", pattern))
    return {w for w in out if _lead_word(w)}


# (round scan12) the words of each entry's real corpus cases (bench/build_lead_words.py: the words two or more of its
# cases' logs hold, with the share of its cases that hold them, against a prior of eight cases), shipped beside
# rules.yaml: the lead runs on the controller without the corpus.  A word that many of an entry's real logs hold
# weighs up to CASE_WEIGHT times a pattern word: it is specific to the entry as the tool, library or call of its
# real runs are.  (Tuned on the misses of batches 1-84: CASE_WEIGHT 4-12 and a prior of 6-12 give the same top-1.)
# (stop 51) The table takes the cases of the held-out batches too (bench/build_lead_words.py), six times the corpus's real
# logs; with them a case word weighs up to 4 pattern words, not 8 (chosen on batches 115-124 held out of a table of the
# corpus and batches 1-114: top entry right 26 -> 33 of 61 misses reported unrecognised, in the lead 40 -> 50; then
# measured once on batches 125-136, held out of a table of batches 1-124: 16 -> 20 of 41, in the lead 26 -> 33).
LEAD_WORDS = Path(__file__).with_name("lead_words.json")
LEAD_MODEL = leadmodel.MODEL
CASE_WEIGHT = 4.0
LEAD_MIN = 0.6      # the least score of a lead of one shared token (two shared tokens are a lead whatever they weigh)
# (round scan13) how a token's weight falls with the number of entries that share it: weight / df ** DF_POWER.  A token
# that two or three entries share (a soname, a tool of a few entries) still says much about each of them; dividing by
# the whole count (1.0) let one rare word of a wrong entry outweigh three shared words of the right one.  And the words
# of the lines shown around an unrecognised line (its context) weigh CONTEXT_WEIGHT of the line's own: the line says
# what failed, its neighbours may be another step's.  (Tuned on the named misses of batches 1-84 reported unrecognised:
# DF_POWER 0.5-0.7 with CONTEXT_WEIGHT 0.5-1.0 is a plateau of 127-132 right top entries of 247, against 123 at 1.0/1.0.)
DF_POWER = 0.6
CONTEXT_WEIGHT = 0.75


def _case_words() -> dict:
    try:
        return json.loads(LEAD_WORDS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def lead_index(rules: list[Rule], case_words: dict | None = None) -> tuple[dict, dict]:
    """Each entry's key tokens with their weights (a pattern's, a literal's or the name's word 1; a word of its real
    cases CASE_WEIGHT times the share of its cases that hold it, where that is more) and how many entries share each
    token: built once per scan, not per line."""
    case_words = _case_words() if case_words is None else case_words
    vocab = {}
    for r in rules:
        weights = dict.fromkeys(_entry_words(r), 1.0)
        for w, share in (case_words.get(r.id) or {}).items():
            weights[w] = max(weights.get(w, 0.0), CASE_WEIGHT * share)
        vocab[r.id] = weights
    df: dict = {}
    for words in vocab.values():
        for w in words:
            df[w] = df.get(w, 0) + 1
    return vocab, df


# (stop 52) The learned half of the lead (leadmodel.py, bench/build_lead_model.py): a multinomial model over the words
# of the real failing runs ranks the entries by everything around a failure, not only by the entries' own tokens.  The
# two are fused: each entry's learned probability, plus LEARNED_MIX / rank for each entry of the key-token lead (the key
# tokens break the model's near-ties and keep an entry the model has no cases of); an entry the key tokens do not name
# needs a probability of LEARNED_MIN (a line of words every failure shares, "Traceback", "Segmentation fault", spreads
# the model thin: no lead).  Chosen on batches 125-136 held out of models of 1-124 (MIX 0.1-0.2 the best of 0 to 1: top
# entry right 20 -> 24 of 41 misses reported unrecognised, in the lead 34 both) and 115-124 held out of 1-114 (MIN
# 0.4-0.6 a plateau: top 12 -> 15 of 20, in the lead 17 both); measured once on batches 137-142 held out of models of
# 1-136: unchanged, 7 of 19 top, 9 in the lead; and on batches 143-148, collected blind after it was shipped: top 11 ->
# 14 of 24, in the lead 17 both (VARIANTS.md, "Stop 52").
LEARNED_MIX = 0.1
LEARNED_MIN = 0.5


def looks_like(text: str, rules: list[Rule], limit: int = 3, index: tuple | None = None, around: str = "",
               learned: bool = True) -> list[str]:
    """The entries nearest to an unrecognised line: by the key tokens they share (sonames, tools, enum names), each
    token weighed by how much it belongs to the entry and how few entries share it (the words of `around`, the lines
    shown about it, less than its own), fused with the learned model's ranking of the line and its lines around
    (`learned`); a lead for the reader, never a finding."""
    keyed = _key_token_lead(text, rules, limit, index, around)
    model = leadmodel.load(LEAD_MODEL) if learned else None
    if model is None:
        return keyed
    names = {r.id for r in rules}
    scores = {e: p for e, p in leadmodel.probabilities(text + "\n" + around, model).items()
              if e in names and (p >= LEARNED_MIN or e in keyed)}
    for rank, rid in enumerate(keyed, 1):
        scores[rid] = scores.get(rid, 0.0) + LEARNED_MIX / rank
    return sorted(scores, key=lambda rid: (-scores[rid], rid))[:limit]


def _key_token_lead(text: str, rules: list[Rule], limit: int, index: tuple | None, around: str) -> list[str]:
    vocab, df = index or lead_index(rules)
    mine = _words(text)
    near = _words(around) - mine if around else set()
    scored = []
    for r in rules:
        weights = vocab[r.id]
        shared = [w for w in mine if w in weights]
        shared_near = [w for w in near if w in weights]
        if not shared and not shared_near:
            continue
        score = sum(weights[w] / df[w] ** DF_POWER for w in shared) \
            + CONTEXT_WEIGHT * sum(weights[w] / df[w] ** DF_POWER for w in shared_near)
        if score >= LEAD_MIN or len(shared) + len(shared_near) >= 2:
            scored.append((-score, r.id))
    return [rid for _, rid in sorted(scored)[:limit]]


def unrecognised_lead(u: dict, rules: list[Rule], index: tuple | None = None) -> list[str]:
    """The lead of one unrecognised report line: its own words and those of the lines shown around it
    ("failed to load all models" names no library, the allocator's line above it does). `rules` are the
    entries a lead may name (not the harmless ones)."""
    around = " ".join(str(c[1]) for c in u.get("context") or [] if isinstance(c, (list, tuple)) and len(c) > 1)
    return looks_like(u["text"], rules, index=index, around=around)


def annotate(reports: list[dict], rules: list[Rule], ctx: dict) -> list[dict]:
    by_id = {r.id: r for r in rules}
    leadable = [r for r in rules if r.severity != "harmless"]
    index = lead_index(leadable) if any(rep.get("unrecognised") for rep in reports) else None
    for rep in reports:
        rctx = {**ctx, "port": str(rep["port"])} if rep.get("port") else ctx     # a service's log: its own port
        for u in rep.get("unrecognised", []):
            near = unrecognised_lead(u, leadable, index)
            if near:
                u["looks_like"] = near
        for f in rep.get("findings", []) + rep.get("harmless", []):
            rule = by_id.get(f["id"])
            f["title"] = rule.title if rule else f["id"]
            f["cause"] = fill(rule.cause, rctx) if rule else ""
            f["fix"] = fill(rule.fix, rctx) if rule else ""
            f["remedy"] = rule.remedy if rule else None
    return reports


def exit_code(reports: list[dict]) -> int:
    """1: a known error; 3: only unrecognised errors; 0: neither (harmless/warnings alone); 2: input error.

    A log that could not be read to its end (a truncated .gz) keeps what was found up to there:
    a known error in it is still 1; otherwise the incomplete read is an input error (2).
    """
    if any("error" in r and "findings" not in r for r in reports):
        return 2
    if any(f["severity"] == "error" for r in reports for f in r["findings"]):
        return 1
    if any("error" in r for r in reports):
        return 2
    if any(r["unrecognised"] for r in reports):
        return 3
    return 0


def log_findings(conn, host, log, rules=None) -> list[dict]:
    """The findings of one log on the host, for a failed step's report; [] when the scan itself
    fails, since the step's tail is shown either way."""
    from .table import load_table

    rules = rules or load_table()
    try:
        reports = scan_local([log], rules) if conn.is_local else scan_remote(conn, [log], rules)
    except Exception:  # noqa: BLE001 - the tail is still shown
        return []
    reports = annotate(reports, rules, fix_context(host))
    return [f for r in reports for f in r.get("findings", [])]
