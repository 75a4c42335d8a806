#!/usr/bin/env bash
# usage: bench/trigger-run.sh BIN CONFIG|- SCENARIO [BENCH FLAGS...]
# The trigger runs of BENCHMARKS.md (issue 13: storm, trigger-latency): starts `BIN serve` with
# CONFIG (- for the defaults) on a fresh data directory (API 127.0.0.1:18481, trapper
# 127.0.0.1:18451), runs `BIN bench SCENARIO FLAGS --target ... --trapper ... --password-file ...`
# against it, then prints the evaluator's counters, the events stored (event.get countOutput,
# problem and OK: every flip sent must show as one of each, also those resolved before the
# bench's 50 ms poll saw them) and the server's CPU time, and stops the server and removes its data.
# RUNS=N runs the bench N times against the same server, printing the counters after each. Each
# run creates its triggers; without --keep it deletes them at the end, and event.get no longer
# counts their events. So: --keep with RUNS=1 to count a run's events, RUNS=N without --keep.
# For one core each: bash bench/quiet.sh bench/trigger-run.sh ... (the lock and CPU 0).
set -euo pipefail
BIN=$1 CONF=$2 SC=$3; shift 3
DATA=$(mktemp -d /tmp/pg-trig-XXXXXX)
API=http://127.0.0.1:18481/api_jsonrpc.php
C=(); [ "$CONF" = - ] || C=(--config "$CONF")
"$BIN" serve "${C[@]}" --data-dir "$DATA" --http.listen 127.0.0.1:18481 --trapper.listen 127.0.0.1:18451 >"$DATA.log" 2>&1 9>&- &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DATA" "$DATA.log"' EXIT
for _ in $(seq 1 100); do [ -s "$DATA/admin-password" ] && curl -s -m 2 -o /dev/null $API && break; sleep 0.2; done
rpc() { curl -s -H 'Content-Type: application/json-rpc' -d "$1" $API; }
for run in $(seq 1 "${RUNS:-1}"); do
  echo "=== run $run/${RUNS:-1} $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$BIN" bench "$SC" "$@" --target $API --trapper 127.0.0.1:18451 --password-file "$DATA/admin-password"
  echo "--- evaluator after run $run"
  curl -s http://127.0.0.1:18481/metrics | grep -E '^peregrine_(trigger_eval|trigger_evaluations|event_commits)' || true
  TOKEN=$(rpc "{\"jsonrpc\":\"2.0\",\"method\":\"user.login\",\"params\":{\"username\":\"Admin\",\"password\":\"$(cat "$DATA/admin-password")\"},\"id\":1}" | sed -E 's/.*"result":"([^"]+)".*/\1/')
  for v in 1 0; do
    echo "events value=$v (all runs so far): $(rpc "{\"jsonrpc\":\"2.0\",\"method\":\"event.get\",\"params\":{\"countOutput\":true,\"value\":$v},\"auth\":\"$TOKEN\",\"id\":2}")"
  done
  echo "server CPU so far: $(ps -o times= -p $PID) s user+system"
done
