#!/usr/bin/env bash
# usage: bench/zabbix-configcache.sh N_HOSTS ITEMS_PER_HOST TRIGGERS_PER_HOST
#
# Zabbix 6.0's configuration cache at a given size, the peer's side of "the model at 10M items"
# (docs/bench/estate.md): how long a Zabbix server takes from its start until its configuration
# cache holds N hosts, N×ITEMS items and N×TRIGGERS triggers, how many bytes of the cache they take
# (→ bytes per item; run once with TRIGGERS_PER_HOST=0 to separate items from triggers), and the
# server's memory and CPU.
#
# How:
# - A private zabbix_server (bench/zabbix-private.sh, same 6.0.14 binary and the peer's PostgreSQL,
#   its own database $ZP_DB, own ports and paths) — never the shared peer's server or database.
#   `zabbix-private.sh init` creates the database from the package's schema and writes the
#   configuration; the database is dropped at the end (also on failure).
# - The database is filled with SQL (generate_series; the API would take hours at 1M hosts), in the
#   shape the 6.0.14 peer's API stores (recorded from the peer on 2026-11-30 by creating one host,
#   item and trigger through its API and reading the rows): hosts monitored (status 0; disabled
#   hosts would not be cached like monitored ones), each with a Zabbix agent interface on
#   127.0.0.1:10050 and in one host group; trapper items (type 2, so nothing is polled), float,
#   with a row in item_rtdata each as the API makes; triggers stored as `{FUNCTIONID}>1e15` with
#   a `functions` row (name 'last', parameter '$'), i.e. last(/host/key)>1e15. Names follow
#   Peregrine's generated model (internal/catalog genSpec/BenchmarkDeriveScale): hosts
#   host-NNNNN.example.net, keys app.metric[i,requests], vfs.fs.size[/datai,pfree],
#   net.if.in[ethi,bytes], custom.check.i (item name = key), trigger description
#   "check {HOST.NAME}", priority 3. The load runs as postgres with session_replication_role=replica
#   (no per-row FK checks, no per-row name_upper triggers: name_upper is written directly).
# - The server is started directly with the configuration init wrote (no PHP frontend: it is not
#   needed and would add its own memory), and timed from its start until its trapper answers a
#   `zabbix.stats` request (StatsAllowedIP=127.0.0.1 comes from the peer's configuration). In 6.0
#   the main process starts the configuration syncer first and waits for its first sync (the
#   whole cache) before it starts the other processes (seen in the log: "server #3 started" comes
#   only when the sync has ended), so the trapper answers only once the cache is full. The script
#   also prints the log's figure: from "Starting Zabbix Server" to the first process started after
#   the configuration syncer, and the syncer's own part of it.
# - The cache's bytes used: `rcache` of zabbix.stats (total/used/free of the CacheSize shared
#   memory: what the internal item zabbix[rcache,buffer,used] reports), read after the first sync
#   and again after the configuration syncer's next full sync (6.0 re-reads every table each
#   CacheUpdateFrequency, 10 s from the peer's configuration) — `zabbix_server -R diaginfo` has no
#   configuration cache section in 6.0, and DebugLevel=4 costs too much at 10M items.
# - Memory: the sum of PSS over all zabbix_server processes (the shared memory is counted once,
#   only its touched pages), the main process's RSS and peak RSS (VmHWM: the first sync holds the
#   whole PostgreSQL result of a table in libpq memory), the configuration syncer's RSS and peak.
#   CPU: the configuration syncer's CPU time when the trapper first answers (the first sync) and
#   the duration its process title gives for its next full sync ("synced configuration in X sec").
#
# Settings (environment): ZP_DB (zbxcache), ZP_ROOT (/tmp/zbxcache), ZP_PORT (10075),
# ZP_WEBPORT (10095, unused), ZP_CACHESIZE (CacheSize, 2G; at most 64G in 6.0), KEEP=1 keeps the
# server and database running after the measurement (then: ZP_DB=… bench/zabbix-private.sh drop).
set -euo pipefail
N=${1:?usage: $0 N_HOSTS ITEMS_PER_HOST TRIGGERS_PER_HOST}
I=${2:?usage: $0 N_HOSTS ITEMS_PER_HOST TRIGGERS_PER_HOST}
T=${3:?usage: $0 N_HOSTS ITEMS_PER_HOST TRIGGERS_PER_HOST}
[ "$T" -le "$I" ] || { echo "zabbix-configcache: TRIGGERS_PER_HOST must be ≤ ITEMS_PER_HOST (one item each)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
export ZP_DB=${ZP_DB:-zbxcache} ZP_ROOT=${ZP_ROOT:-/tmp/zbxcache} ZP_PORT=${ZP_PORT:-10075}
export ZP_WEBPORT=${ZP_WEBPORT:-10095} ZP_CACHESIZE=${ZP_CACHESIZE:-2G}
PEER_ROOT=${PEER_ROOT:-/tmp/zbxpeer}
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h "$PEER_ROOT/sock" -p "${PGPORT:-55432}" -U postgres -d "$ZP_DB")
log=$ZP_ROOT/log/zabbix_server.log

cleanup() { [ "${KEEP:-0}" = 1 ] || "$here/zabbix-private.sh" drop >/dev/null; }
trap cleanup EXIT
"$here/zabbix-private.sh" drop >/dev/null
"$here/zabbix-private.sh" init
rm -f "$log"

echo "zabbix-configcache: filling $ZP_DB: $N hosts × $I items, $T triggers each" >&2
t0=$(date +%s.%N)
"${PSQL[@]}" <<SQL
set session_replication_role = replica;
set synchronous_commit = off;
set work_mem = '256MB';
begin;
insert into hstgrp (groupid, name) values (900000, 'zbxcache');
insert into hosts (hostid, host, name, name_upper, status)
  select 1000000 + h, n, n, upper(n), 0
  from generate_series(0, $N - 1) h, lateral (select format('host-%s.example.net', lpad(h::text, 5, '0')) n) x;
insert into interface (interfaceid, hostid, main, type, useip, ip, dns, port)
  select 1000000 + h, 1000000 + h, 1, 1, 1, '127.0.0.1', '', '10050' from generate_series(0, $N - 1) h;
insert into hosts_groups (hostgroupid, hostid, groupid)
  select 1000000 + h, 1000000 + h, 900000 from generate_series(0, $N - 1) h;
insert into items (itemid, type, hostid, name, name_upper, key_, delay, value_type, status, units, history)
  select 1000000 + h * $I + i, 2, 1000000 + h, k, upper(k), k, '0', 0, 0,
    case i % 4 when 1 then '%' when 2 then 'bps' else '' end,
    case when i % 10 = 0 then '7d' else '90d' end
  from generate_series(0, $N - 1) h, generate_series(0, $I - 1) i,
  lateral (select case i % 4 when 0 then format('app.metric[%s,requests]', i)
                             when 1 then format('vfs.fs.size[/data%s,pfree]', i)
                             when 2 then format('net.if.in[eth%s,bytes]', i)
                             else format('custom.check.%s', i) end k) x;
insert into item_rtdata (itemid) select 1000000 + h * $I + i from generate_series(0, $N - 1) h, generate_series(0, $I - 1) i;
insert into triggers (triggerid, expression, description, priority)
  select 1000000 + h * $T + t, format('{%s}>1e15', 1000000 + h * $T + t), 'check {HOST.NAME}', 3
  from generate_series(0, $N - 1) h, generate_series(0, $T - 1) t;
insert into functions (functionid, itemid, triggerid, name, parameter)
  select 1000000 + h * $T + t, 1000000 + h * $I + t, 1000000 + h * $T + t, 'last', '\$'
  from generate_series(0, $N - 1) h, generate_series(0, $T - 1) t;
commit;
analyze;
SQL
t1=$(date +%s.%N)
counts=$("${PSQL[@]}" -tAc "select (select count(*) from hosts where hostid >= 1000000), (select count(*) from items where itemid >= 1000000), (select count(*) from triggers where triggerid >= 1000000)")
echo "zabbix-configcache: filled in $(echo "$t1 - $t0" | bc) s: hosts|items|triggers $counts" >&2

# zabbix.stats over the trapper port: prints "total used" of rcache, or nothing while it does not answer.
stats() {
  python3 - "$ZP_PORT" <<'PY' 2>/dev/null || true
import json, socket, struct, sys
req = json.dumps({"request": "zabbix.stats"}).encode()
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
s.sendall(b"ZBXD\x01" + struct.pack("<Q", len(req)) + req)
buf = b""
while True:
    b = s.recv(1 << 16)
    if not b:
        break
    buf += b
r = json.loads(buf[13:])["data"]["rcache"]
print(r["total"], r["used"])
PY
}
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/${3:-status}" 2>/dev/null || echo 0; }

echo "zabbix-configcache: starting zabbix_server, CacheSize=$ZP_CACHESIZE" >&2
s0=$(date +%s.%N)
zabbix_server -c "$ZP_ROOT/zabbix_server.conf" </dev/null 9>&-
for _ in $(seq 1 120); do [ -s "$ZP_ROOT/run/zabbix_server.pid" ] && break; sleep 0.5; done
main=$(cat "$ZP_ROOT/run/zabbix_server.pid")
r=
for _ in $(seq 1 36000); do # ≤ 2 h
  kill -0 "$main" 2>/dev/null || { tail -20 "$log" >&2; echo "zabbix-configcache: zabbix_server exited" >&2; exit 1; }
  r=$(stats); [ -n "$r" ] && break
  sleep 0.2
done
s1=$(date +%s.%N)
[ -n "$r" ] || { echo "zabbix-configcache: no answer to zabbix.stats" >&2; exit 1; }
syncer=$(pgrep -P "$main" -f 'configuration syncer' | head -1)
sync_cpu=$(ticks "$syncer")
# Wait for the syncer's next full sync to end (its title then reads "synced configuration in X sec").
title() { tr '\0' ' ' < "/proc/$syncer/cmdline"; }
for _ in $(seq 1 36000); do title | grep -q 'synced configuration in' && break; sleep 0.2; done
r2=$(stats)
hz=$(getconf CLK_TCK)
pss=0
for p in "$main" $(pgrep -P "$main"); do pss=$((pss + $(kb "$p" Pss smaps_rollup))); done
logt() { grep -m1 "$1" "$log" | awk -F: '{print substr($3, 1, 2) * 3600 + substr($3, 3, 2) * 60 + substr($3, 5)}'; }
lstart=$(logt 'Starting Zabbix Server'); lsync=$(logt 'started \[configuration syncer #1\]')
lafter=$(logt 'server #3 started')
read -r total used <<<"$r"; read -r total2 used2 <<<"$r2"
cat <<EOF
zabbix-configcache: Zabbix $(zabbix_server -V | head -1 | awk '{print $NF}'), CacheSize=$ZP_CACHESIZE
hosts|items|triggers in the database: $counts (filled in $(printf %.1f "$(echo "$t1 - $t0" | bc)") s)
start until the trapper answers (cache full): $(printf %.2f "$(echo "$s1 - $s0" | bc)") s; log: start → next process after the configuration syncer $(printf %.2f "$(echo "$lafter - $lstart" | bc)") s, of which the first sync $(printf %.2f "$(echo "$lafter - $lsync" | bc)") s
configuration syncer CPU (first sync): $(echo "scale=2; $sync_cpu / $hz" | bc) s
configuration syncer's later full sync: $(title | grep -o 'synced configuration in [0-9.]* sec')
rcache (configuration cache) after the first sync: total $total B, used $used B
rcache after the syncer's full sync:               total $total2 B, used $used2 B
used per item (triggers and the empty database's configuration included): $( [ $((N * I)) -gt 0 ] && echo "scale=1; $used2 / ($N * $I)" | bc) B
memory: all zabbix_server processes PSS $((pss / 1024)) MiB; main RSS $(($(kb "$main" VmRSS) / 1024)) MiB, peak $(($(kb "$main" VmHWM) / 1024)) MiB; configuration syncer RSS $(($(kb "$syncer" VmRSS) / 1024)) MiB, peak $(($(kb "$syncer" VmHWM) / 1024)) MiB
EOF
