#!/usr/bin/env bash
# usage: sudo bench/zabbix-ha-failover.sh [KILLS] [DELAY]
# Zabbix 6.0's HA failover time, for the side by side with Peregrine's (docs/ha.md): starts its own
# PostgreSQL 15 (initdb under $ROOT, port $PGPORT), loads the Zabbix schema Debian ships, sets the
# failover delay (default 10s), starts two zabbix_server nodes with HANodeName (trappers on
# 127.0.0.1:$PORT_A and $PORT_B), then KILLS times (default 5): kill -9 the active node's process
# group, and time until the other node is active in ha_node (status 3), until its trapper port
# listens, and until zabbix_sender gets an answer from it; then restarts the killed node as a
# standby. Also records what a standby does on its trapper port and what zabbix_sender does with
# ServerActive=a;b. Loopback only; everything it made is removed at the end (KEEP=1 keeps $ROOT).
# Needs root (runs PostgreSQL as postgres, zabbix_server as zabbix) and Debian's
# zabbix-server-pgsql, zabbix-agent (zabbix_sender) and postgresql-15 packages.
set -euo pipefail
KILLS=${1:-5}
DELAY=${2:-10s}
ROOT=${ROOT:-/tmp/zbx-ha-bench}
PGPORT=${PGPORT:-55471}
PORT_A=${PORT_A:-10171}
PORT_B=${PORT_B:-10172}
PGBIN=/usr/lib/postgresql/15/bin
for p in zabbix-server-pgsql zabbix-agent postgresql-15; do
  dpkg -s "$p" >/dev/null 2>&1 || { echo "needs the Debian package $p (apt-get install -y $p)" >&2; exit 2; }
done

# killgroup PID: kill -9 the process group of a zabbix_server (the daemon is not its group's leader)
killgroup() {
  local g; g=$(ps -o pgid= -p "$1" 2>/dev/null | tr -d ' ')
  [ -n "$g" ] && kill -9 -- "-$g" 2>/dev/null || true
}
cleanup() {
  for n in a b; do
    if [ -f "$ROOT/run-$n/zabbix_server.pid" ]; then
      killgroup "$(cat "$ROOT/run-$n/zabbix_server.pid")"
    fi
  done
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$ROOT/pg" -m immediate stop >/dev/null 2>&1 || true
  [ "${KEEP:-}" = 1 ] || rm -rf "$ROOT"
}
trap cleanup EXIT
rm -rf "$ROOT"
mkdir -p "$ROOT"/{pg,sock,log} "$ROOT"/run-a "$ROOT"/run-b
chown postgres:postgres "$ROOT/pg" "$ROOT/sock"
chown zabbix:zabbix "$ROOT/run-a" "$ROOT/run-b"
chmod 1777 "$ROOT/log"
chmod 755 "$ROOT"
runuser -u postgres -- "$PGBIN/initdb" -D "$ROOT/pg" -E UTF8 --locale=C.UTF-8 -A trust >/dev/null
cat >>"$ROOT/pg/postgresql.conf" <<PGC
listen_addresses = '127.0.0.1'
port = $PGPORT
unix_socket_directories = '$ROOT/sock'
shared_buffers = 128MB
fsync = on
PGC
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$ROOT/pg" -l "$ROOT/log/pg.log" -w start >/dev/null
PSQL=(psql -X -q -h "$ROOT/sock" -p "$PGPORT")
"${PSQL[@]}" -U postgres -c "create role zabbix login password 'zabbix'"
"${PSQL[@]}" -U postgres -c "create database zabbix owner zabbix encoding 'UTF8' template template0"
zcat /usr/share/zabbix-server-pgsql/{schema,images,data}.sql.gz | "${PSQL[@]}" -U zabbix -d zabbix -v ON_ERROR_STOP=1 >/dev/null
"${PSQL[@]}" -U zabbix -d zabbix -c "update config set ha_failover_delay='$DELAY'"
sql() { "${PSQL[@]}" -U zabbix -d zabbix -tAc "$1"; }

conf() { # name port
  cat >"$ROOT/$1.conf" <<ZC
ListenIP=127.0.0.1
ListenPort=$2
SourceIP=127.0.0.1
LogType=file
LogFile=$ROOT/log/zabbix_server-$1.log
PidFile=$ROOT/run-$1/zabbix_server.pid
SocketDir=$ROOT/run-$1
TmpDir=$ROOT/run-$1
DBHost=$ROOT/sock
DBPort=$PGPORT
DBName=zabbix
DBUser=zabbix
DBPassword=zabbix
HANodeName=zbx-$1
NodeAddress=127.0.0.1:$2
StartPollers=1
StartPollersUnreachable=1
StartPingers=1
StartDiscoverers=1
StartHTTPPollers=1
StartTrappers=2
StartDBSyncers=1
CacheSize=32M
HistoryCacheSize=16M
HistoryIndexCacheSize=4M
TrendCacheSize=4M
ValueCacheSize=8M
HousekeepingFrequency=0
Timeout=4
AllowRoot=0
User=zabbix
ZC
}
conf a "$PORT_A"
conf b "$PORT_B"
port_of() { [ "$1" = a ] && echo "$PORT_A" || echo "$PORT_B"; }
start() { zabbix_server -c "$ROOT/$1.conf" </dev/null; }
now() { date +%s.%N; }
listens() { ss -ltnH "sport = :$1" | grep -q .; }
# status of node zbx-$1 in ha_node (0 standby, 1 stopped, 2 unavailable, 3 active)
status() { sql "select status from ha_node where name='zbx-$1'"; }
sender() { timeout 10 zabbix_sender -z 127.0.0.1 -p "$1" -s zbx-ha-bench-nohost -k k -o 1 2>&1 || true; }

start a
for _ in $(seq 1 600); do [ "$(status a)" = 3 ] && break; sleep 0.1; done
start b
for _ in $(seq 1 600); do [ "$(status b)" = 0 ] && break; sleep 0.1; done
for _ in $(seq 1 100); do listens "$PORT_A" && break; sleep 0.1; done
sleep 3
echo "== nodes: $(sql "select name||'='||status from ha_node order by name" | tr '\n' ' ')"
echo "== standby zbx-b: trapper port $PORT_B listening: $(listens "$PORT_B" && echo yes || echo no)"
echo "== zabbix_sender -z standby: $(sender "$PORT_B" | tr '\n' ' ')"
echo "== zabbix_sender -z active:  $(sender "$PORT_A" | tr '\n' ' ')"
printf 'ServerActive=127.0.0.1:%s;127.0.0.1:%s\nHostname=zbx-ha-bench-nohost\n' "$PORT_B" "$PORT_A" >"$ROOT/agentd.conf"
echo "== zabbix_sender -c ServerActive=standby;active: $(timeout 20 zabbix_sender -vv -c "$ROOT/agentd.conf" -k k -o 1 2>&1 | tr '\n' ' ' || true)"

printf '%s\t%s\t%s\t%s\n' kill active_s listen_s sender_s
for i in $(seq 1 "$KILLS"); do
  act=a; [ "$(status b)" = 3 ] && act=b
  other=b; [ $act = b ] && other=a
  op=$(port_of $other)
  pid=$(cat "$ROOT/run-$act/zabbix_server.pid")
  t0=$(now)
  killgroup "$pid"
  ta= tl= ts=
  end=$(( $(date +%s) + 300 ))
  while [ "$(date +%s)" -lt $end ] && { [ -z "$ta" ] || [ -z "$tl" ] || [ -z "$ts" ]; }; do
    [ -z "$ta" ] && [ "$(status $other)" = 3 ] && ta=$(now)
    [ -z "$tl" ] && listens "$op" && tl=$(now)
    if [ -n "$tl" ] && [ -z "$ts" ] && sender "$op" | grep -q 'processed:'; then ts=$(now); fi
    sleep 0.1
  done
  printf '%d\t%.1f\t%.1f\t%.1f\n' "$i" "$(echo "${ta:-0} - $t0" | bc)" "$(echo "${tl:-0} - $t0" | bc)" "$(echo "${ts:-0} - $t0" | bc)"
  rm -f "$ROOT/run-$act/zabbix_server.pid"
  start $act
  for _ in $(seq 1 600); do [ "$(status $act)" = 0 ] && break; sleep 0.1; done
  sleep 2
done
