#!/usr/bin/env python3
"""Measure how closely the static table follows the full all-MiniLM-L6-v2 model.

    python3 skill-search/distill/quality.py --corpus ../shared/corpus

Reads skill packs in place (never copies their text). For a fixed sample of skills
it takes one prose sentence from each skill's body as a stand-in request and the
skill's `description` as the document, then builds pairs: each request with its own
description and with three other skills' descriptions. For every table variant
(dims x weighting x row normalisation, int8-quantised as shipped) it reports:
  - spearman: rank correlation between the static and the full model's cosines
    over all pairs;
  - r@1 / r@5: how often the request's own description ranks first / in the top 5
    among all sampled descriptions (the full model's figures are printed first).
With `--table FILE` it also scores a written table (static-embeddings.bin as
distill.py writes it, e.g. the shipped one), and with `--variants none` only that.
No evaluation request file is read.
"""

from __future__ import annotations

import argparse
import random
import re
import struct
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import distill  # noqa: E402

SAMPLE = 400
NEGATIVES = 3
SEED = 13


def frontmatter_description(text: str) -> str | None:
    m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    if not m:
        return None
    fm = m.group(1)
    d = re.search(r"^description:\s*(.*?)(?=^\S|\Z)", fm, re.S | re.M)
    if not d:
        return None
    desc = " ".join(d.group(1).split()).strip()
    desc = re.sub(r"^[>|][-+]?\s*", "", desc).strip().strip("\"'")
    return desc or None


def body_sentence(text: str, desc: str) -> str | None:
    body = re.sub(r"^---\n.*?\n---\n", "", text, count=1, flags=re.S)
    fence = False
    for line in body.splitlines():
        s = line.strip()
        if s.startswith("```"):
            fence = not fence
            continue
        if fence or not s or s.startswith(("#", "|", "<", ">", "!", "[")):
            continue
        s = re.sub(r"^[-*\d.)\s]+", "", s)
        s = re.sub(r"[*_`]", "", s)
        words = s.split()
        if 8 <= len(words) <= 40 and s not in desc:
            return " ".join(words)
    return None


def sample(corpus: Path) -> list[tuple[str, str]]:
    items = []
    for path in sorted(corpus.rglob("SKILL.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        desc = frontmatter_description(text)
        if not desc:
            continue
        sent = body_sentence(text, desc)
        if sent:
            items.append((sent, desc))
    random.Random(SEED).shuffle(items)
    return items[:SAMPLE]


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra = np.argsort(np.argsort(a)).astype(np.float64)
    rb = np.argsort(np.argsort(b)).astype(np.float64)
    return float(np.corrcoef(ra, rb)[0, 1])


def recall(q: np.ndarray, d: np.ndarray, k: int) -> float:
    sims = q @ d.T
    own = np.diag(sims)
    better = (sims > own[:, None]).sum(1)
    return float((better < k).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True, type=Path)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/minilm-token-vectors.npy"))
    ap.add_argument("--dims", type=int, nargs="*", default=[64, 128, 192, 256, 384])
    ap.add_argument("--table", type=Path, default=None, help="also score this written table")
    ap.add_argument("--variants", choices=["all", "none"], default="all")
    args = ap.parse_args()

    mdir = distill.model_dir()
    vocab = distill.load_vocab(mdir)
    bert = distill.Bert(mdir)

    items = sample(args.corpus)
    print(f"{len(items)} (body sentence, description) items", file=sys.stderr)
    full_tok = distill.reference_tokenizer(mdir)
    raw_tok = distill.reference_tokenizer(mdir)
    raw_tok.no_truncation()
    texts = [t for pair in items for t in pair]
    full = np.array([distill_full(bert, full_tok, t) for t in texts])
    fq, fd = full[0::2], full[1::2]
    ids = [raw_tok.encode(t, add_special_tokens=False).ids for t in texts]

    rng = random.Random(SEED)
    pairs = []
    for i in range(len(items)):
        pairs.append((i, i))
        for _ in range(NEGATIVES):
            j = rng.randrange(len(items))
            pairs.append((i, j))
    full_cos = np.array([fq[i] @ fd[j] for i, j in pairs])
    print(f"full model: r@1 {recall(fq, fd, 1):.3f} r@5 {recall(fq, fd, 5):.3f}")

    def score(table: np.ndarray) -> str:
        emb = np.array([distill.static_embed(table, x) for x in ids])
        sq, sd = emb[0::2], emb[1::2]
        cos = np.array([sq[i] @ sd[j] for i, j in pairs])
        return f"{spearman(cos, full_cos):.3f}    {recall(sq, sd, 1):.3f} {recall(sq, sd, 5):.3f}"

    if args.table is not None:
        print("table  spearman  r@1   r@5")
        print(f"{args.table}  {score(read_table(args.table, vocab))}", flush=True)
    if args.variants == "none":
        return
    if args.cache.exists():
        vecs = np.load(args.cache)
    else:
        vecs = distill.token_vectors(bert, vocab)
        np.save(args.cache, vecs)
    print("dims weighting unit  spearman  r@1   r@5")
    for dims in args.dims:
        for scheme in ["none", "zipf"]:
            for unit in [False, True]:
                table = distill.build_table(vecs, vocab, dims, scheme, unit)
                table = distill.dequantised(*distill.quantise(table))
                print(f"{dims:4d} {scheme:9s} {str(unit):5s} {score(table)}", flush=True)


def read_table(path: Path, vocab: list[str]) -> np.ndarray:
    """A written table, dequantised (format: distill.py's docstring), checked as the Rust
    loader checks it: magic, version, lengths, checksum."""
    data = path.read_bytes()
    magic = len(distill.MAGIC)
    if data[:magic] != distill.MAGIC or len(data) < magic + 24:
        sys.exit(f"{path}: not a static embedding table")
    version, n, dims, vocab_bytes = struct.unpack("<IIII", data[magic : magic + 16])
    (checksum,) = struct.unpack("<Q", data[magic + 16 : magic + 24])
    body = data[magic + 24 :]
    if version != distill.FORMAT_VERSION:
        sys.exit(f"{path}: format version {version}, expected {distill.FORMAT_VERSION}")
    if len(body) != vocab_bytes + 4 * n + n * dims:
        sys.exit(f"{path}: {len(body)} bytes after the header, expected {vocab_bytes + 4 * n + n * dims}")
    if distill.fnv1a64(body) != checksum:
        sys.exit(f"{path}: checksum mismatch (damaged file)")
    if body[:vocab_bytes].decode("utf-8").split("\n")[:-1] != vocab:
        sys.exit(f"{path}: its vocabulary is not the model's")
    scales = np.frombuffer(body, dtype="<f4", count=n, offset=vocab_bytes)
    q = np.frombuffer(body, dtype=np.int8, count=n * dims, offset=vocab_bytes + 4 * n).reshape(n, dims)
    return distill.dequantised(q, scales)


def distill_full(bert: distill.Bert, tok, text: str) -> np.ndarray:
    return bert.sentence(tok.encode(text).ids)


if __name__ == "__main__":
    main()
