#!/usr/bin/env bash
# container-check.sh checks what the container image needs of the binary,
# without a Docker engine: the binary built exactly as the Dockerfile builds
# it (scripts/build-release.sh), laid out as the image lays it out, runs
# `vaultask serve` from an empty directory as a non-root user (uid 65532
# when run as root, as in the image) with no HOME, and only /data writable;
# it becomes ready, `vaultask healthcheck` passes, a question is answered
# with a citation, SIGTERM stops it cleanly, and nothing outside /data was
# written.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
pid=""
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	chmod -R u+w "$work" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "container-check: FAIL: $*" >&2
	[ ! -f "$work/serve.log" ] || sed 's/^/  serve: /' "$work/serve.log" >&2
	exit 1
}

root=$work/root
mkdir -p "$root/usr/local/bin" "$root/opt/vaultask" "$root/etc/vaultask" "$root/data" "$root/empty"
bash scripts/build-release.sh "$root/usr/local/bin/vaultask" container-check
# The models as the image holds them: fetched by the binary itself (a no-op
# when the cache holds them whole), each in its folder.
models=${VAULTASK_MODELS__BUILTIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vaultask}
"$root/usr/local/bin/vaultask" fetch-model --dir "$models" >/dev/null
mkdir -p "$root/opt/vaultask/models"
cp -r "$models/." "$root/opt/vaultask/models/"
cp config.yaml "$root/etc/vaultask/config.yaml"
cp -r demo/vault "$root/vault" # the vault, read-only (the image reads CouchDB; a folder is enough here)

as=()
if [ "$(id -u)" -eq 0 ]; then
	chown 65532:65532 "$root/data"
	as=(setpriv --reuid=65532 --regid=65532 --clear-groups)
fi
chmod -R a-w "$root/usr" "$root/opt" "$root/etc" "$root/vault" "$root/empty"
chmod a-w "$root"
chmod -R a+rX "$work"
touch "$work/before"
sleep 1 # file times have a resolution; what changes after this is new

# The image's environment, and nothing else.
env=(
	VAULTASK_CONFIG="$root/etc/vaultask/config.yaml"
	VAULTASK_MODELS__BUILTIN_DIR="$root/opt/vaultask/models"
	VAULTASK_INDEX__PATH="$root/data/vaultask.db"
	VAULTASK_OVERRIDES_FILE="$root/data/overrides.json"
	VAULTASK_VAULT__SOURCE=folder
	VAULTASK_VAULT__PATH="$root/vault"
	'VAULTASK_SENSITIVITY__PERSONAL_PATHS=["Journal/**","Tastings/**"]'
	VAULTASK_API__LISTEN=127.0.0.1:0
	HOME=/nonexistent
	PATH=/usr/bin:/bin
)
bin=$root/usr/local/bin/vaultask
(cd "$root/empty" && exec "${as[@]}" env -i "${env[@]}" "$bin" serve) >"$work/serve.log" 2>&1 &
pid=$!

url=""
for _ in $(seq 300); do
	url=$(sed -n 's/.*serving on \(http:[^ ]*\).*/\1/p' "$work/serve.log")
	[ -n "$url" ] && break
	kill -0 "$pid" 2>/dev/null || fail "serve exited"
	sleep 0.1
done
[ -n "$url" ] || fail "serve did not listen within 30s"
ready=false
for _ in $(seq 600); do
	if env -i "${env[@]}" "$bin" healthcheck --url "$url/readyz" >/dev/null 2>&1; then
		ready=true
		break
	fi
	kill -0 "$pid" 2>/dev/null || fail "serve exited"
	sleep 0.1
done
$ready || fail "not ready within 60s"
(cd "$root/empty" && env -i "${env[@]}" VAULTASK_API__LISTEN="${url#http://}" "$bin" healthcheck) >/dev/null || fail "vaultask healthcheck failed"
answer=$(curl -fsS "$url/v1/chat/completions" -H 'Content-Type: application/json' \
	-d '{"model":"vault-ask","messages":[{"role":"user","content":"At what temperature do I bake the sourdough?"}]}')
case $answer in
*'[[Recipes/Sourdough bread'*) ;;
*) fail "the answer cites no sourdough note: $answer" ;;
esac
version=$(curl -fsS "$url/status" | sed -n 's/.*"version":"\([^"]*\)".*/\1/p')
[ "$version" = container-check ] || fail "/status says version $version, want the stamped container-check"

kill -TERM "$pid"
code=0
wait "$pid" || code=$?
pid=""
[ "$code" -eq 0 ] || fail "serve exited $code after SIGTERM"
written=$(find "$root" -newer "$work/before" ! -path "$root/data" ! -path "$root/data/*" -print)
[ -z "$written" ] || fail "written outside /data: $written"
[ -s "$root/data/vaultask.db" ] || fail "no index in /data"
echo "container-check: ok: the release binary ($(du -h "$bin" | cut -f1)) served from an empty directory as uid $(stat -c %u "$root/data"), only /data written: $(find "$root/data" -mindepth 1 -printf "%f ")"
