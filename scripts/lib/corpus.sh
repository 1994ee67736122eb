# shellcheck shell=bash
# Shared by scripts/eval-models.sh and scripts/fit-coverage.sh: the help and
# hub LiveSync dumps of ../shared/corpus rebuilt into folders, and indexes of
# them (and of the demo vault) per embedding model, cached in
# ~/.cache/vaultask-eval keyed by the code that builds them (the git blobs
# of index/, llm/ but its coverage fits, vectorizer/ and feed/), so that a
# second run only measures.
# Source it after setting corpus; it sets cache, key and bin.

: "${corpus:?set corpus before sourcing scripts/lib/corpus.sh}"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vaultask-eval
key=$(git ls-tree -r HEAD index llm vectorizer feed | grep -v $'\tllm/coverage/' | sha256sum | cut -c1-12)
[[ -z "$(git status --porcelain -- index llm vectorizer feed ':!llm/coverage')" ]] || key="$key-dirty-$(date +%s)"
mkdir -p "$cache/index/$key" "$cache/vault"
bin=$cache/vaultask-$key
[[ -x "$bin" ]] || go build -tags sqlite_fts5 -o "$bin" ./cmd/vaultask

die() { echo "$(basename "$0"): $*" >&2; exit 1; }

# vaults rebuilds the help and hub folders once.
vaults() {
	local name
	[[ -f "$corpus/help.changes.json.gz" && -f "$corpus/hub.changes.json.gz" ]] || die "no help/hub dumps in $corpus"
	for name in help hub; do
		[[ -d "$cache/vault/$name" ]] && continue
		python3 scripts/reference/extract_vault.py "$corpus" "$name" "$cache/vault/$name.tmp"
		mv "$cache/vault/$name.tmp" "$cache/vault/$name"
	done
}

# corpus_env prints the VAULTASK_ variables that open the index of corpus
# $2 built with the model whose settings are $1 (see settings): the demo
# vault's personal folders as demo/QUESTIONS.md has them.
corpus_env() {
	local db=$cache/index/$key/$1-$2.db
	echo "VAULTASK_INDEX__PATH=$db VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json VAULTASK_LOG__LEVEL=warn"
	[[ $2 == demo ]] && echo 'VAULTASK_SENSITIVITY__PERSONAL_PATHS=["Journal/**","Tastings/**"]'
	return 0
}

# index_corpus indexes corpus $2 with model $1 (its VAULTASK_ variables in
# the rest of the arguments) unless a finished index is cached.
index_corpus() {
	local model=$1 c=$2 db=$cache/index/$key/$1-$2.db dir=$cache/vault/$2
	shift 2
	[[ -f "$db.done" ]] && return
	[[ $c == demo ]] && dir=demo/vault
	local common
	read -ra common <<<"$(corpus_env "$model" "$c" | tr '\n' ' ')"
	rm -f "$db" "$db-wal" "$db-shm"
	echo "$(basename "$0"): indexing $c with $model" >&2
	env "${common[@]}" "$@" "$bin" index --from-dir "$dir" >&2
	touch "$db.done"
}
