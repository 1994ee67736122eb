#!/usr/bin/env python3
"""An OpenAI-compatible /v1/embeddings server for a sentence-embedding model in
ONNX form (model.onnx + tokenizer.json, e.g. from LangChain4j's
langchain4j-embeddings-* jars on Maven Central), run with onnxruntime.

It adds no prefix or instruction: the client sends the text as the model wants
it (vaultask adds the model's query and document prefixes itself). Texts longer
than --max-tokens are truncated, as most embedding servers do.

Measurement tooling only (scripts/eval-models.sh); never part of vaultask.
"""
import argparse
import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


class Model:
    def __init__(self, onnx, tokenizer, pooling, max_tokens, threads):
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        self.sess = ort.InferenceSession(onnx, so, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.sess.get_inputs()}
        self.tok = Tokenizer.from_file(tokenizer)
        self.tok.enable_truncation(max_tokens)
        self.tok.no_padding()
        self.pooling = pooling

    def embed(self, texts):
        out = []
        for t in texts:  # one at a time: no padding, exact per-text results
            enc = self.tok.encode(t)
            ids = np.array([enc.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            h = self.sess.run(None, feed)[0][0]  # [seq, dim]
            v = h[0] if self.pooling == "cls" else h.mean(axis=0)
            out.append((v / max(np.linalg.norm(v), 1e-12)).astype(np.float32))
            self.tokens += len(enc.ids)
        return out

    tokens = 0


def handler(model, name):
    lock = threading.Lock()

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def send(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/v1/models":
                self.send(200, {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "reference"}]})
            else:
                self.send(404, {"error": {"message": "unknown route", "type": "invalid_request_error"}})

        def do_POST(self):
            if self.path not in ("/v1/embeddings", "/embeddings"):
                self.send(404, {"error": {"message": "unknown route", "type": "invalid_request_error"}})
                return
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            inp = req.get("input")
            texts = [inp] if isinstance(inp, str) else inp
            if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
                self.send(400, {"error": {"message": "'input' must be a string or a non-empty array of strings", "type": "invalid_request_error"}})
                return
            with lock:
                before = model.tokens
                vecs = model.embed(texts)
                used = model.tokens - before
            b64 = req.get("encoding_format") == "base64"
            data = [{"object": "embedding", "index": i,
                     "embedding": base64.b64encode(v.tobytes()).decode() if b64 else v.tolist()} for i, v in enumerate(vecs)]
            self.send(200, {"object": "list", "data": data, "model": name,
                            "usage": {"prompt_tokens": used, "total_tokens": used}})

    return H


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--name", required=True, help="the model id /v1/models reports")
    ap.add_argument("--pooling", choices=["mean", "cls"], required=True)
    ap.add_argument("--max-tokens", type=int, default=512)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--port", type=int, default=8001)
    a = ap.parse_args()
    m = Model(a.onnx, a.tokenizer, a.pooling, a.max_tokens, a.threads)
    httpd = ThreadingHTTPServer(("127.0.0.1", a.port), handler(m, a.name))
    print(f"onnx-embed-serve: {a.name} on http://127.0.0.1:{a.port}/v1", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
