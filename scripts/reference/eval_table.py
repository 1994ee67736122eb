#!/usr/bin/env python3
"""Print the model table of scripts/eval-models.sh from its JSON runs.

Usage: eval_table.py OUTDIR MODEL...

Each OUTDIR/<model>-<corpus>.json is `vaultask eval retrieval --json` with
three arms: A the defaults, B full text only, C vector only. The table gives
R@1, R@8 and MRR of each arm, and for the defaults the questions whose
reciprocal rank went up and down against the first model's defaults on the
same corpus (the per-question rule the defaults are chosen by).
"""
import json
import os
import sys

ARMS = {"A": "defaults", "B": "full text only", "C": "vector only"}


def load(out, model, corpus):
    path = os.path.join(out, f"{model}-{corpus}.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def reciprocal_ranks(run, arm_index):
    rr = {}
    for f in run["files"]:
        for r in f["results"]:
            rank = r["ranks"][arm_index]
            rr[r["question"]] = 1.0 / rank if rank > 0 else 0.0
    return rr


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, models = sys.argv[1], sys.argv[2:]
    print("| model | corpus | arm | R@1 | R@8 | MRR | vs " + models[0] + " (defaults): questions up / down |")
    print("|---|---|---|---|---|---|---|")
    for corpus in ("help", "hub", "demo"):
        base = load(out, models[0], corpus)
        base_rr = reciprocal_ranks(base, 0) if base else None
        for model in models:
            run = load(out, model, corpus)
            if run is None:
                continue
            n = run["total"]["covered"]
            for i, arm in enumerate(run["total"]["arms"]):
                cmp = ""
                if i == 0 and base_rr is not None and model != models[0]:
                    rr = reciprocal_ranks(run, 0)
                    up = sum(1 for q, v in rr.items() if v > base_rr.get(q, 0) + 1e-9)
                    down = sum(1 for q, v in rr.items() if v < base_rr.get(q, 0) - 1e-9)
                    cmp = f"{up} / {down}"
                print(f"| {model} | {corpus} ({n}) | {ARMS.get(arm['label'], arm['label'])} | "
                      f"{arm['recall_at_1']:.3f} | {arm['recall_at_k']:.3f} | {arm['mrr']:.3f} | {cmp} |")


if __name__ == "__main__":
    main()
