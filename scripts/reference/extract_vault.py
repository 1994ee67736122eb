#!/usr/bin/env python3
"""Rebuild a vault folder of markdown from a LiveSync dump in ../shared/corpus.

Usage: extract-vault.py CORPUS_DIR NAME OUT_DIR

Reads NAME.changes.json(.gz), keeps each document's latest revision, joins the
`data` of each live plain .md note's `children` in order, and writes it under
OUT_DIR/<path>. Measurement tooling only (see eval/QUESTIONS.md); nothing of
the corpus is kept in the repository.
"""
import gzip
import json
import os
import sys


def load(corpus, name):
    for fn in (f"{name}.changes.json.gz", f"{name}.changes.json"):
        p = os.path.join(corpus, fn)
        if os.path.exists(p):
            op = gzip.open if fn.endswith(".gz") else open
            with op(p, "rt", encoding="utf-8") as f:
                return json.load(f)
    sys.exit(f"extract-vault: no {name}.changes.json(.gz) in {corpus}")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    corpus, name, out = sys.argv[1:]
    latest = {}
    for row in load(corpus, name)["results"]:
        doc = row.get("doc")
        if doc is None:
            continue
        latest[row["id"]] = (row, doc)  # _changes lists a doc once, at its last seq
    leaves = {i: d for i, (r, d) in latest.items() if d.get("type") == "leaf"}
    n = 0
    for i, (row, doc) in latest.items():
        if row.get("deleted") or doc.get("_deleted") or doc.get("deleted"):
            continue
        if doc.get("type") != "plain" or not str(doc.get("path", "")).endswith(".md"):
            continue
        if i.startswith(("h:", "i:", "ix:", "ps:", "_")):
            continue
        text = "".join(leaves[c]["data"] for c in doc["children"])
        dst = os.path.join(out, doc["path"])
        os.makedirs(os.path.dirname(dst) or out, exist_ok=True)
        with open(dst, "w", encoding="utf-8") as f:
            f.write(text)
        n += 1
    print(f"extract-vault: {n} notes of {name} written to {out}")


if __name__ == "__main__":
    main()
