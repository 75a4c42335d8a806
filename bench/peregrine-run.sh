#!/usr/bin/env bash
# usage: [PG_CONFIG=FILE] bench/peregrine-run.sh PEREGRINE_BINARY CMD...
# Starts `peregrine serve` on a fresh data directory (API 127.0.0.1:18391, trapper 127.0.0.1:18361,
# its defaults or PG_CONFIG's settings otherwise), runs CMD with PG_API, PG_TRAPPER,
# PG_PASSWORD_FILE and PG_DATA (the data directory) set (CMD may use them through sh -c), then
# stops the server and removes its data. For the side-by-side runs, under bash bench/quiet.sh like
# the peer's.
set -euo pipefail
BIN=$1; shift
DATA=$(mktemp -d /tmp/pg-sbs-XXXXXX)
C=(); [ -z "${PG_CONFIG:-}" ] || C=(--config "$PG_CONFIG")
"$BIN" serve "${C[@]}" --data-dir "$DATA" --http.listen 127.0.0.1:18391 --trapper.listen 127.0.0.1:18361 >"$DATA.log" 2>&1 9>&- &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DATA" "$DATA.log"' EXIT
for _ in $(seq 1 100); do [ -s "$DATA/admin-password" ] && curl -s -m 2 -o /dev/null http://127.0.0.1:18391/api_jsonrpc.php && break; sleep 0.2; done
export PG_API=http://127.0.0.1:18391/api_jsonrpc.php PG_TRAPPER=127.0.0.1:18361 PG_PASSWORD_FILE=$DATA/admin-password PG_DATA=$DATA
"$@"
