#!/usr/bin/env python3
"""Write the training sentences of distill.py's refinement step, one per line.

Run (see README.md beside this file):

    python3 skill-search/distill/sentences.py \
        --packages /var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages.lz4 \
        --python-lib /root/.pyenv/versions/3.11.7/lib/python3.11 \
        --out /tmp/distill-sentences.txt

The sentences are short English texts about what software does, from two sources that
have nothing to do with the skill corpus or the evaluation requests:

  1. Every distinct short description (the `Description:` line) of a Debian binary
     package index (`Packages`, plain or compressed with lz4, xz or gzip), of three words or
     more: "high availability load balancer for TCP connections".
  2. The first paragraph of every docstring of the Python standard library's modules
     (the folder given, one level of packages, tests and IDLE left out), split into
     sentences of 4 to 40 words, without those that look like code.

The output is sorted and deduplicated, so the same inputs give the same bytes. The rules
are deliberately simple and part of what the shipped table was made from: a docstring
whose blank line between paragraphs holds spaces counts as one paragraph, and a sentence
is cut after every ".", "!" or "?" followed by a space ("e.g. " too). A `.lz4` index needs
the `lz4` command (Debian package lz4).
"""

from __future__ import annotations

import argparse
import ast
import gzip
import hashlib
import lzma
import re
import subprocess
import sys
from pathlib import Path

# Shortest package description kept, in words ("Python bindings" says too little).
MIN_DESCRIPTION_WORDS = 3
# Docstring sentences kept, in words.
MIN_SENTENCE_WORDS = 4
MAX_SENTENCE_WORDS = 40
# A sentence with any of these reads as code, not prose.
CODE_LIKE = re.compile(r"[{}<>=]|::|\w\(")


def packages_bytes(path: Path) -> bytes:
    """The index, decompressed by its suffix (none, `.lz4`, `.xz` or `.gz`)."""
    data = path.read_bytes()
    if path.suffix == ".lz4":
        return subprocess.run(["lz4", "-dc"], input=data, capture_output=True, check=True).stdout
    if path.suffix == ".xz":
        return lzma.decompress(data)
    if path.suffix == ".gz":
        return gzip.decompress(data)
    if path.suffix in ("", ".txt"):
        return data
    sys.exit(f"{path}: unknown compression {path.suffix!r} (a Packages index, plain, .lz4, .xz or .gz)")


def package_descriptions(text: str) -> set[str]:
    out = set()
    for line in text.splitlines():
        if line.startswith("Description: "):
            d = line[len("Description: ") :].strip()
            if len(d.split()) >= MIN_DESCRIPTION_WORDS:
                out.add(d)
    return out


def docstring_sentences(lib: Path) -> set[str]:
    files = sorted(list(lib.glob("*.py")) + list(lib.glob("*/*.py")))
    out = set()
    for f in files:
        parts = f.relative_to(lib).parts
        if parts[0] in ("idlelib", "site-packages") or any(p.startswith("test") for p in parts):
            continue
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except (SyntaxError, ValueError):  # UnicodeDecodeError is a ValueError
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            doc = ast.get_docstring(node)
            if not doc:
                continue
            para = " ".join(doc.strip().split("\n\n")[0].split())
            for s in re.split(r"(?<=[.!?])\s+", para):
                n = len(s.split())
                if MIN_SENTENCE_WORDS <= n <= MAX_SENTENCE_WORDS and not CODE_LIKE.search(s):
                    out.add(s)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packages", required=True, type=Path, help="a Debian Packages index (plain, .lz4, .xz or .gz)")
    ap.add_argument("--python-lib", required=True, type=Path, help="the Python standard library folder")
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()
    data = packages_bytes(args.packages)
    print(f"packages index: sha256 {hashlib.sha256(data).hexdigest()} (decompressed)", file=sys.stderr)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        sys.exit(f"{args.packages}: not UTF-8 once decompressed ({e})")
    debian = package_descriptions(text)
    python = docstring_sentences(args.python_lib)
    if not debian or not python:
        sys.exit(f"no sentences from {'the packages index' if not debian else args.python_lib}: wrong file or folder?")
    sentences = sorted(debian | python)
    data = "".join(s + "\n" for s in sentences).encode("utf-8")
    args.out.write_bytes(data)
    print(
        f"wrote {args.out}: {len(sentences)} sentences ({len(debian)} package descriptions, "
        f"{len(python)} docstring sentences), sha256 {hashlib.sha256(data).hexdigest()}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
