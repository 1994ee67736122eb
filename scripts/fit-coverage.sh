#!/usr/bin/env bash
# fit-coverage.sh refits the coverage judgement shipped in llm/coverage/:
# for each built-in embedding model, the help, hub and demo corpora are
# indexed (scripts/lib/corpus.sh, cached), every question of the fitting
# sets (eval/{help,hub,demo}-questions.tsv and eval/coverage/*.tsv) and of
# the held-out sets (eval/coverage/heldout/*.tsv) is retrieved by `vaultask
# eval web-trigger --features`, and devtools/cmd/coverage-fit fits a
# logistic model on the fitting sets, places its lines on cross-validated
# probabilities, and reports the held-out sets under the final model, which
# never saw them. Then the full-text fit (no query vector: its features
# read full-text hits alone, the same under every model) and the fallback
# fit for a model without one of its own (no distance, which every model
# spreads on a scale of its own; fitted on the three models together).
# Reports go to OUTDIR (default reports/coverage).
#
# Usage: scripts/fit-coverage.sh [-c CORPUS_DIR] [-o OUTDIR] [-n] [MODEL...]
#   MODEL: use-lite e5 bge (default: all three); -n prints the reports
#   without writing llm/coverage/.
#
# A measurement tool, not part of the product: it needs python3 (to rebuild
# the corpora's folders) and the built-in models' files.
set -euo pipefail
cd "$(dirname "$0")/.."

corpus=../shared/corpus
out=reports/coverage
write=1
while getopts "c:o:n" opt; do
	case $opt in
	c) corpus=$OPTARG ;;
	o) out=$OPTARG ;;
	n) write="" ;;
	*) sed -n '2,20p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
models=("$@")
[[ ${#models[@]} -gt 0 ]] || models=(use-lite e5 bge)

# shellcheck source=scripts/lib/corpus.sh
. scripts/lib/corpus.sh
mkdir -p "$out/features"

# The features each fit weighs, chosen on the three corpora together
# (reports/RETRIEVAL.md, "Knowing when the vault does not answer").
vector_features=d1,d1_foreign,absent,ent_miss,share_top3,foreign
fulltext_features=absent,fent_miss,fshare_top3,foreign
fallback_features=absent,ent_miss,share_top3,foreign,agree

declare -A builtin=([use-lite]=builtin/use-lite [e5]=builtin/multilingual-e5-small [bge]=builtin/bge-small-en-v1.5)
declare -A fitname=([use-lite]=use-lite [e5]=multilingual-e5-small [bge]=bge-small-en-v1.5)

vaults
for model in "${models[@]}"; do
	[[ -n "${builtin[$model]:-}" ]] || die "unknown model $model (use-lite e5 bge)"
	for c in help hub demo; do
		index_corpus "$model" "$c" "VAULTASK_MODELS__EMBEDDING=${builtin[$model]}"
		read -ra common <<<"$(corpus_env "$model" "$c" | tr '\n' ' ')"
		for set in fit heldout; do
			files=(--questions "eval/coverage/$c.tsv")
			[[ $set == fit ]] && files+=(--questions "eval/$c-questions.tsv")
			[[ $set == heldout ]] && files=(--questions "eval/coverage/heldout/$c.tsv")
			env "${common[@]}" "VAULTASK_MODELS__EMBEDDING=${builtin[$model]}" "$bin" eval web-trigger "${files[@]}" --features \
				>"$out/features/$model-$c-$set.jsonl"
		done
	done
done

# fit NAME FEATURES MODEL... fits on the named models' features together.
fit() {
	local name=$1 features=$2 args=() held=() m c target=()
	shift 2
	for m in "$@"; do
		for c in help hub demo; do
			args+=("$c=$out/features/$m-$c-fit.jsonl")
			held+=(-heldout "$c=$out/features/$m-$c-heldout.jsonl")
		done
	done
	[[ -n "$write" ]] && target=(-o "llm/coverage/$name.json")
	go run ./devtools/cmd/coverage-fit -name "$name" -features "$features" "${target[@]}" "${held[@]}" "${args[@]}" | tee "$out/$name.txt"
}

for model in "${models[@]}"; do
	fit "${fitname[$model]}" "$vector_features" "$model"
done
if [[ ${#models[@]} -eq 3 ]]; then
	fit full-text "$fulltext_features" bge
	fit fallback "$fallback_features" use-lite e5 bge
fi
