#!/usr/bin/env bash
# Samples the Zabbix peer's configuration syncer: for each sync it prints
# the wall time the syncer reports in its process title and the CPU spent
# meanwhile by the syncer and by the peer's PostgreSQL backends (from
# /proc, in seconds). Usage: bash bench/zabbix-sync-cpu.sh [SYNCS] [PGDATA]
# (defaults: 3 syncs, the peer's /tmp/zbxpeer/pg). The peer must run here.
set -euo pipefail
syncs=${1:-3}
pgdata=${2:-/tmp/zbxpeer/pg}
syncer=$(pgrep -f 'zabbix_server: configuration syncer' | head -1)
postmaster=$(pgrep -f "postgres -D $pgdata" | head -1)
[ -n "$syncer" ] && [ -n "$postmaster" ] || { echo "peer not running" >&2; exit 1; }
hz=$(getconf CLK_TCK)
ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
pgticks() { local s=0 p; for p in $(pgrep -P "$postmaster"); do s=$((s + $(ticks "$p"))); done; echo $s; }
title() { tr '\0' ' ' < "/proc/$syncer/cmdline"; }
# Wait for the start of a sync, then time each one to its end.
until title | grep -q 'syncing configuration'; do sleep 0.2; done
for ((i = 0; i < syncs; i++)); do
  s0=$(ticks "$syncer"); p0=$(pgticks); t0=$(date +%s.%N)
  while title | grep -q 'syncing configuration'; do sleep 0.2; done
  s1=$(ticks "$syncer"); p1=$(pgticks); t1=$(date +%s.%N)
  awk -v w="$(echo "$t1 - $t0" | bc)" -v s=$((s1 - s0)) -v p=$((p1 - p0)) -v hz="$hz" -v t="$(title)" \
    'BEGIN { printf "sync: wall %.1f s, syncer CPU %.2f s, postgres CPU %.2f s  (%s)\n", w, s/hz, p/hz, t }'
  [ $((i + 1)) -lt "$syncs" ] && until title | grep -q 'syncing configuration'; do sleep 0.2; done
done
