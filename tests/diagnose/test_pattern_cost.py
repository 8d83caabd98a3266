"""No built-in pattern backtracks on a long line: a crafted log must not hang the scan.

Any line up to scanner.MAX_LINE (16 KiB) reaches the regexes, and a service log can carry
request text someone else wrote. Each entry's regexes (patterns, unless, preceded_by,
followed_by, reset_by) run over 16 KiB lines made of its own literals and words repeated
(with and without separators), the shapes that make `A.*B` or `\\w*X\\w*` retry at every
occurrence; each search must stay under a CPU-time bound (process time, so that other
processes on a busy machine do not count).
"""

import re
import time

import pytest

from ocrdeploy.diagnose import scanner
from ocrdeploy.diagnose.engine import wire_rules
from ocrdeploy.diagnose.table import load_table

BOUND_S = 0.25          # a linear search of 16 KiB takes a few ms; the old patterns took 0.2-77 s
KEYS = ("patterns", "unless", "preceded_by", "followed_by", "reset_by")


def crafted_lines(rule, pattern):
    toks = set(rule.literals)
    toks |= set(re.findall(r"[A-Za-z_][\w.]{2,}", pattern))
    toks |= {"warning", "error", "paddle", "127.0.0.1"}
    n = scanner.MAX_LINE
    lines = []
    for t in sorted(toks):
        for sep in (" ", ""):
            unit = t + sep
            lines.append((unit * (n // len(unit) + 1))[:n])
    frag = " ".join(sorted(toks)) + " "
    lines.append((frag * (n // len(frag) + 1))[:n])
    lines += [" " * n, "a" * n, "[" * n, "/" * n, "1" * n]
    return lines


RULES = load_table()


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_every_entry_stays_linear_on_crafted_16k_lines(rule):
    slow = []
    for key in KEYS:
        for pattern in getattr(rule, key) or []:
            rx = re.compile(pattern)
            for line in crafted_lines(rule, pattern):
                t = time.process_time()
                rx.search(line)
                spent = time.process_time() - t
                if spent > BOUND_S:
                    slow.append((round(spent, 2), key, pattern, line[:40]))
                    break
    assert not slow, slow


def test_the_reported_lines_scan_quickly(tmp_path):
    """The red team's two crafted logs, end to end through the scanner."""
    n = scanner.MAX_LINE
    log = tmp_path / "crafted.log"
    log.write_text(("warning paddle " * (n // 15))[:n] + "\n" + ("request failed 400 " * (n // 19))[:n] + "\n")
    t = time.process_time()
    (rep,) = scanner.run_request({"paths": [str(log)], "rules": wire_rules(RULES), "context": 2,
                                  "engine": "python"})
    assert time.process_time() - t < 5 and "error" not in rep


def test_the_wrapper_prefix_regex_stays_linear_on_crafted_16k_lines():
    """The scanner strips wrapper prefixes (scanner.WRAPPER) from every candidate line: one anchored match per
    layer, bounded runs, so a crafted line of digits, dots, spaces or brackets costs a few ms at most."""
    n = scanner.MAX_LINE
    units = ["1", "1.", "1.1 ", "#1 ", "#1 1.1 ", " ", "[", "[ 1.1", "a ", "a |", "a-1 ", "Jun 30 11:07:05 ", "2024-05-01",
             "2024-05-01T12:00:00", "[pod/", "0: ", "stdout F "]
    slow = []
    for unit in units:
        line = (unit * (n // len(unit) + 1))[:n]
        t = time.process_time()
        scanner.unwrap(line)
        scanner.WRAPPER.search(line)     # even unanchored, as a search over the whole line
        spent = time.process_time() - t
        if spent > BOUND_S:
            slow.append((round(spent, 2), unit))
    assert not slow, slow
