#!/usr/bin/env bash
# Starts the CouchDB-compatible test server on loopback, in the background, and
# waits until it answers. Go tests don't need this (couchtest.Start runs
# server.js itself); use it to share one server across test binaries:
#
#   eval "$(tstest/couchtest/server/start.sh | sed 's/^/export /')"
#   trap 'kill "$(cat "${TMPDIR:-/tmp}/couch-test-server.pid")"' EXIT
#   go test ./...
#
# Env: COUCH_PORT (0 = any free port) COUCH_ADMIN_USER (admin) COUCH_ADMIN_PASS (s3cret)
#      COUCH_PID_FILE (${TMPDIR:-/tmp}/couch-test-server.pid)
#      COUCH_LOG_FILE (${TMPDIR:-/tmp}/couch-test-server.log)
# On success prints COUCH_URL=, COUCH_ADMIN_USER= and COUCH_ADMIN_PASS= lines.
set -euo pipefail
cd "$(dirname "$0")"
export COUCH_HOST=127.0.0.1
export COUCH_PORT=${COUCH_PORT:-0}
export COUCH_ADMIN_USER=${COUCH_ADMIN_USER:-admin}
export COUCH_ADMIN_PASS=${COUCH_ADMIN_PASS:-s3cret}
pidf=${COUCH_PID_FILE:-${TMPDIR:-/tmp}/couch-test-server.pid}
logf=${COUCH_LOG_FILE:-${TMPDIR:-/tmp}/couch-test-server.log}
if [ ! -d node_modules/express-pouchdb ]; then
  echo "couch test server: $PWD/node_modules is missing; run scripts/setup.sh" >&2
  exit 1
fi
: >"$logf"
node server.js >"$logf" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$pidf"
for _ in $(seq 1 150); do
  url=$(sed -n 's/^listening on \(http[^ ]*\) .*/\1/p' "$logf")
  if [ -n "$url" ] && curl -s -o /dev/null "$url"; then
    printf 'COUCH_URL=%s\nCOUCH_ADMIN_USER=%s\nCOUCH_ADMIN_PASS=%s\n' "$url" "$COUCH_ADMIN_USER" "$COUCH_ADMIN_PASS"
    exit 0
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill "$pid" 2>/dev/null || true
echo "couch test server failed to start:" >&2
cat "$logf" >&2
exit 1
