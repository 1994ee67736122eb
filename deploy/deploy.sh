#!/usr/bin/env bash
# deploy.sh deploys vaultask to one host over ssh with Docker Compose:
#
#   deploy/deploy.sh [--dry-run] VERB...
#
#   build   build the image for the host's platform (e.g. linux/amd64 from an arm64 laptop)
#   ship    copy the image (docker save | ssh docker load), compose.yaml and .env to the host
#   up      start or update the service (docker compose up -d)
#   logs    follow the service's log
#   status  wait for /readyz (DEPLOY_READY_TIMEOUT, sized for a slow NAS), then print /status
#   all     build ship up status
#
# Settings come from deploy/.deploy.env (or $DEPLOY_ENV); copy
# deploy/.deploy.env.example. --dry-run prints every command instead of
# running it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

usage() {
	sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

die() {
	echo "deploy: $*" >&2
	exit 1
}

dry_run=false
verbs=()
for arg in "$@"; do
	case $arg in
	--dry-run | -n) dry_run=true ;;
	-h | --help) usage ;;
	build | ship | up | logs | status) verbs+=("$arg") ;;
	all) verbs+=(build ship up status) ;;
	*)
		echo "deploy: unknown verb or flag: $arg" >&2
		usage
		;;
	esac
done
[ ${#verbs[@]} -gt 0 ] || usage

settings=${DEPLOY_ENV:-$here/.deploy.env}
[ -f "$settings" ] || die "no settings file $settings: copy deploy/.deploy.env.example to deploy/.deploy.env and fill it in"
# shellcheck source=/dev/null
. "$settings"

need() {
	local name
	for name in "$@"; do
		[ -n "${!name:-}" ] || die "$settings: set $name"
	done
}
need DEPLOY_HOST DEPLOY_DIR
DEPLOY_PLATFORM=${DEPLOY_PLATFORM:-linux/amd64}
DEPLOY_PORT=${DEPLOY_PORT:-8080}
DEPLOY_READY_TIMEOUT=${DEPLOY_READY_TIMEOUT:-300}
DEPLOY_ENV_FILE=${DEPLOY_ENV_FILE:-$here/.env}
version=${DEPLOY_VERSION:-$(git -C "$root" describe --tags --always --dirty 2>/dev/null || echo dev)}
image=${DEPLOY_IMAGE:-vaultask}:$version
# shellcheck disable=SC2153 # checked by need above
target=$DEPLOY_HOST
[ -z "${DEPLOY_USER:-}" ] || target=$DEPLOY_USER@$DEPLOY_HOST
[[ $DEPLOY_READY_TIMEOUT =~ ^[0-9]+$ ]] || die "$settings: DEPLOY_READY_TIMEOUT is seconds, not $DEPLOY_READY_TIMEOUT"
[[ $DEPLOY_PORT =~ ^[0-9]+$ ]] || die "$settings: DEPLOY_PORT is a port number, not $DEPLOY_PORT"
# shellcheck disable=SC2206 # DEPLOY_SSH_OPTS is a list of words by design
ssh_opts=(${DEPLOY_SSH_OPTS:-})

# run runs a command, or prints it under --dry-run.
run() {
	if $dry_run; then
		printf '+'
		printf ' %q' "$@"
		printf '\n'
	else
		"$@"
	fi
}

# words prints its arguments shell-quoted, each after a space.
words() {
	[ $# -eq 0 ] || printf ' %q' "$@"
}

# remote runs a shell command line on the host.
remote() {
	run ssh "${ssh_opts[@]}" "$target" "$1"
}

# q quotes a word for the host's shell.
q() { printf '%q' "$1"; }

compose="cd $(q "$DEPLOY_DIR") && VAULTASK_IMAGE=$(q "$image") VAULTASK_PORT=$(q "$DEPLOY_PORT") docker compose -p vaultask"

build() {
	run docker build --platform "$DEPLOY_PLATFORM" --build-arg "VERSION=$version" -t "$image" "$root"
}

ship() {
	if $dry_run; then
		printf '+ docker save %q | gzip | ssh%s %q %q\n' "$image" "$(words "${ssh_opts[@]}")" "$target" 'gunzip | docker load'
	else
		docker save "$image" | gzip | ssh "${ssh_opts[@]}" "$target" 'gunzip | docker load'
	fi
	remote "mkdir -p $(q "$DEPLOY_DIR")"
	send "$here/compose.yaml" "$DEPLOY_DIR/compose.yaml"
	if [ -f "$DEPLOY_ENV_FILE" ]; then
		send "$DEPLOY_ENV_FILE" "$DEPLOY_DIR/.env" # the secrets: 0600 on the host, never on a command line
	else
		echo "deploy: no $DEPLOY_ENV_FILE to copy: the host's $DEPLOY_DIR/.env is used as it is" >&2
	fi
}

# send copies a local file to a path on the host, readable by its owner only
# (ssh rather than scp, whose options differ from ssh's: -P for the port).
send() {
	local script
	script="umask 077 && cat > $(q "$2")"
	if $dry_run; then
		printf '+ ssh%s %q %q < %q\n' "$(words "${ssh_opts[@]}")" "$target" "$script" "$1"
	else
		# shellcheck disable=SC2029 # quoted for the host on purpose
		ssh "${ssh_opts[@]}" "$target" "$script" <"$1"
	fi
}

up() {
	remote "$compose up -d --no-build --remove-orphans"
}

logs() {
	remote "$compose logs --tail=200 --follow"
}

status() {
	local base="http://$DEPLOY_HOST:$DEPLOY_PORT" key="" auth=()
	if [ -f "$DEPLOY_ENV_FILE" ]; then
		key=$(sed -n 's/^VAULTASK_API__KEY=//p' "$DEPLOY_ENV_FILE" | tail -n1)
		[ -z "$key" ] || auth=(-H "Authorization: Bearer $key")
	fi
	if $dry_run; then
		printf '+ until curl -fsS --max-time 5 %q; do sleep 2; done   # for up to %ss\n' "$base/readyz" "$DEPLOY_READY_TIMEOUT"
		printf '+ curl -fsS'
		# The key is shown by name, never printed.
		# shellcheck disable=SC2016
		[ -z "$key" ] || printf ' -H %q' 'Authorization: Bearer $VAULTASK_API__KEY'
		printf ' %q\n' "$base/status"
		return
	fi
	local deadline=$((SECONDS + DEPLOY_READY_TIMEOUT))
	until curl -fsS --max-time 5 "$base/readyz" >/dev/null 2>&1; do
		if [ $SECONDS -ge "$deadline" ]; then
			echo "deploy: $base/readyz not ready after ${DEPLOY_READY_TIMEOUT}s; it says:" >&2
			curl -sS --max-time 5 "$base/readyz" >&2 || true
			echo >&2
			die "see deploy/deploy.sh logs"
		fi
		sleep 2
	done
	echo "deploy: $base is ready"
	curl -fsS "${auth[@]}" "$base/status"
	echo
}

for verb in "${verbs[@]}"; do
	$dry_run || echo "deploy: $verb ($target)" >&2
	"$verb"
done
