"""What the builders of the diagnose's learned parts share (build_doc_model.py, build_lead_model.py): the digest of
the training data a shipped model records, and the command line (--check, --through N, --out FILE).

The fit needs scikit-learn; the digest does not, so the tests check a shipped model against today's corpus and
batches without it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path


def digest(texts: list, labels: list) -> str:
    """Of every training text with its label, in order: what a shipped model was fitted on."""
    h = hashlib.sha256()
    for text, label in zip(texts, labels):
        h.update(f"{label}:{len(text)}:".encode() + text.encode("utf-8", "replace"))
    return h.hexdigest()[:16]


def main(description: str, model_path: Path, through: int, training, fit, builder: str) -> None:
    """`training(through)` -> (texts, labels); `fit(texts, labels)` -> the model's numbers (a dict); `builder` the
    script, named in the stale message.  Prints what was written."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--check", action="store_true", help="exit 1 when the shipped model was trained on other data")
    ap.add_argument("--through", type=int, default=through, help="the last held-out batch trained on")
    ap.add_argument("--out", type=Path, help="write here, not the shipped model")
    args = ap.parse_args()
    texts, labels = training(args.through)
    data = digest(texts, labels)
    if args.check:
        shipped = json.loads(model_path.read_text(encoding="utf-8")).get("data") if model_path.exists() else None
        print(f"{model_path.name} is fresh" if shipped == data else
              f"{model_path.name} is stale: pip install scikit-learn; python bench/{builder}")
        sys.exit(0 if shipped == data else 1)
    model = {"data": data, "through": args.through, "texts": len(texts), **fit(texts, labels)}
    out = args.out or model_path
    out.write_text(json.dumps(model, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {out}: {out.stat().st_size} bytes from {len(texts)} texts (the corpus and batches 1-{args.through})")
