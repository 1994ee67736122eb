#!/usr/bin/env bash
# The demo: index the bundled demo vault (demo/vault) with the built-in
# defaults into data/demo.db and show what the index holds. No API keys.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
go build -tags sqlite_fts5 -o bin/vaultask ./cmd/vaultask
mkdir -p data
export VAULTASK_CONFIG=config.yaml
export VAULTASK_OVERRIDES_FILE=data/demo-overrides.json
export VAULTASK_VAULT__SOURCE=folder
export VAULTASK_VAULT__PATH=demo/vault
export VAULTASK_INDEX__PATH=data/demo.db
export VAULTASK_SENSITIVITY__PERSONAL_PATHS='["Tastings/**"]'
bin/vaultask index
bin/vaultask stats

question="What rating did I give the Barolo 2016?"
echo
echo "== vaultask ask --allow-web=false \"$question\""
echo "   (vault only: personal notes such as Tastings/ are visible)"
bin/vaultask ask --allow-web=false "$question"
echo
echo "== vaultask ask --dry-run \"$question\""
echo "   (allow_web, the CLI default: only open notes are searched, so the personal tasting note cannot appear)"
bin/vaultask ask --dry-run "$question"
