"""bge_golden.py writes llm/bge/testdata/golden.json.gz: texts chosen from
the LiveSync corpora in shared/corpus, with Hugging Face tokenizers' token
ids (the tokenizer.json of Xenova/bge-small-en-v1.5) and, for texts within
512 tokens, the vector onnxruntime computes from the fp32 ONNX file. Run it
through bge-golden.sh, which makes the venv.

The corpus texts are not stored (the corpus is third-party): each entry
names its corpus, document and kind, and the sha256 of the text, so the Go
test reads the same text back from the corpus. Entries of kind "synthetic"
are edge cases written here, stored with their text.

  kind "chunk":     a chunk's `data` (h: id), a passage
  kind "title":     a note's file name without .md, with the query prefix
  kind "note":      a whole note (its chunks joined); past 512 tokens it is
                    tokens-only (no vector)
  kind "synthetic": a text of SYNTHETIC below
"""
import argparse
import base64
import gzip
import hashlib
import json
import os
import re

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

QUERY = "Represent this sentence for searching relevant passages: "
PREFIX = {"chunk": "", "title": QUERY, "note": "", "synthetic": ""}
MAX_TOKENS = 512  # the model's positions, [CLS] and [SEP] included
# (corpus, id prefix, passages, titles, whole notes within 512, notes past 512)
PLAN = [
    ("help", "en/", 60, 12, 6, 3),
    ("help", "sv/", 45, 10, 4, 2),
    ("help", "tr/", 45, 10, 4, 2),
    ("hub", "", 60, 12, 6, 3),
]
MAX_LONG_TOKENS = 3000
# Chunks with these features are taken first (up to FEATURE_PICKS each per
# corpus part), so that the golden texts cover them whatever the order.
FEATURES = {
    "accents": re.compile(r"[À-ɏ]"),
    "cjk": re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"),
    "emoji": re.compile(r"[\U0001F300-\U0001FAFF\u2600-\u27BF]"),
    "url": re.compile(r"https?://"),
    "code": re.compile(r"```|`[^`\n]+`"),
    "table": re.compile(r"^\|.*\|\s*$\n^\|[\s:|-]+\|\s*$", re.M),
}
FEATURE_PICKS = 3
SYNTHETIC = [
    "",
    "...!?",
    "Héllo Wörld, ÅÄÖ åäö çğıİöşü ÇĞIİÖŞÜ",
    "İstanbul'da ılık bir ISPARTA akşamı",
    "日本語のテキストと中文字符 mixed with English",
    "한국어 텍스트",
    "emoji 😀🎉👍🏽 and ☃ snow",
    "https://example.com/path?q=a+b&x=1#frag",
    "a" * 100,
    "a" * 101,
    "x" + "é" * 100,
    "[CLS] literal [SEP] tokens [MASK] and [UNK][PAD] [cls]",
    "tab\tnew\nline\rcr\x0bvt\x0cff\x1cfs\x85nel\u00a0nbsp\u2028ls\u3000ideo",
    "zero\u200bwidth\u00adsoft\ufeffbom\ufffdrepl\x00nul\x7fdel",
    "combining e\u0301 a\u0308 n\u0303 and precomposed é ä ñ",
    "ﬁ ﬂ Ǆ ǅ ẞ ß Σ ς ΣΑΣ",
    "func main() { fmt.Println(\"hi\") } // x := a[i:j]; y->z",
    "| a | b |\n|---|:-:|\n| 1 | 2 |",
    "unaffable unbelievably antidisestablishmentarianism",
    "¡¿«»„“”‘’–—…·•§¶†‡‰′″",
    "\u0378\u0e3a\u0e4e\U0001F970 unassigned, Thai marks, emoji",
]


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


class Picker:
    def __init__(self, tok, corpus, part):
        self.tok, self.corpus, self.part, self.picked, self.seen = tok, corpus, part, [], set()

    def count(self, text, prefix=""):
        return len(self.tok.encode(prefix + text, add_special_tokens=True).ids)

    def n(self, kind, long=None):
        return sum(1 for p in self.picked if p["kind"] == kind and (long is None or p["long"] == long))

    def add(self, kind, i, text, long=False):
        self.seen.add(text)
        self.picked.append({"corpus": self.corpus, "part": self.part, "kind": kind, "id": i, "text": text, "long": long})


def choose(tok, corpus, docs, prefix, n_chunks, n_titles, n_notes, n_long):
    p = Picker(tok, corpus, corpus + " " + prefix)
    ids = order(corpus, notes(docs, prefix))
    chunks = []
    for c in order(corpus, {c for i in ids for c in docs[i]["children"]}):
        text = docs[c]["data"]
        if len(text.strip()) >= 40 and "<svg" not in text and p.count(text) <= MAX_TOKENS:
            chunks.append((c, text))
    for rx in FEATURES.values():
        for c, text in [(c, t) for c, t in chunks if rx.search(t) and t not in p.seen][:FEATURE_PICKS]:
            p.add("chunk", c, text)
    for c, text in chunks:
        if p.n("chunk") >= n_chunks:
            break
        if text not in p.seen:
            p.add("chunk", c, text)
    for i in ids:
        t = title(docs, i)
        if p.n("title") < n_titles and len(t) >= 3 and t not in p.seen:
            p.add("title", i, t)
    for i in ids:
        t = note_text(docs, i)
        k = p.count(t)
        if t in p.seen or len(t.strip()) < 40:
            continue
        if k <= MAX_TOKENS and p.n("note", False) < n_notes:
            p.add("note", i, t)
        elif MAX_TOKENS < k <= MAX_LONG_TOKENS and p.n("note", True) < n_long:
            p.add("note", i, t, long=True)
    return p.picked


def vector(sess, ids):
    """CLS pooling of last_hidden_state, L2-normalized."""
    x = np.asarray([ids], dtype=np.int64)
    out = sess.run(["last_hidden_state"], {
        "input_ids": x, "attention_mask": np.ones_like(x), "token_type_ids": np.zeros_like(x)})[0]
    v = out[0, 0].astype(np.float64)
    return (v / np.linalg.norm(v)).astype(np.float32)


def uvarints(ids):
    out = bytearray()
    for v in ids:
        while v >= 0x80:
            out.append(v & 0x7F | 0x80)
            v >>= 7
        out.append(v)
    return base64.b64encode(bytes(out)).decode()


def entry(tok, sess, e):
    prefix = PREFIX[e["kind"]]
    enc = tok.encode(prefix + e["text"], add_special_tokens=True)
    ids = enc.ids
    assert ids[0] == tok.token_to_id("[CLS]") and ids[-1] == tok.token_to_id("[SEP]"), e["id"]
    out = {
        "corpus": e["corpus"] and e["corpus"] + ".all_docs.json.gz",
        "id": e["id"],
        "kind": e["kind"],
        "prefix": prefix,
        "sha256": hashlib.sha256(e["text"].encode("utf-8")).hexdigest(),
        "tokens": uvarints(ids[1:-1]),
    }
    if e["kind"] == "synthetic":
        out["text"] = e["text"]
    if len(ids) <= MAX_TOKENS:
        out["vector_f16"] = base64.b64encode(np.asarray(vector(sess, ids), dtype="<f2").tobytes()).decode()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", required=True)
    args = ap.parse_args()

    tok = Tokenizer.from_file(os.path.join(args.model_dir, "bge-small-en-v1.5-tokenizer.json"))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    sess = ort.InferenceSession(os.path.join(args.model_dir, "bge-small-en-v1.5.onnx"), opts)
    picked = []
    for corpus, prefix, *counts in PLAN:
        picked += choose(tok, corpus, load(args.corpus, corpus), prefix, *counts)
    picked += [{"corpus": "", "part": "", "kind": "synthetic", "id": "s%02d" % i, "text": t} for i, t in enumerate(SYNTHETIC)]
    out = [entry(tok, sess, e) for e in picked]
    doc = {
        "made_by": args.command,
        "tokenizers": __import__("tokenizers").__version__,
        "onnxruntime": ort.__version__,
        "note": "tokens: HF tokenizers' ids of prefix+text without [CLS]/[SEP] (no truncation), uvarints in "
                "base64; vector_f16 (only for texts of at most 512 tokens with [CLS] and [SEP]): onnxruntime on "
                "the fp32 ONNX, last_hidden_state[:,0] L2-normalized, attention mask 1, token_type_ids 0, "
                "little-endian float16 in base64",
        "texts": out,
    }
    with open(args.out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(json.dumps(doc, indent=0).encode("utf-8"))
    counts = {}
    for e, o in zip(picked, out):
        k = e["part"] + e["kind"] + (" tokens-only" if "vector_f16" not in o else "")
        counts[k] = counts.get(k, 0) + 1
    print("bge-golden: wrote %d texts to %s" % (len(out), args.out))
    for k in sorted(counts):
        print("  %-28s %d" % (k, counts[k]))


if __name__ == "__main__":
    main()
