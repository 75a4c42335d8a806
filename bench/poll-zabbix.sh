#!/usr/bin/env bash
# bench/poll-zabbix.sh POLLERS PEREGRINE_BIN [bench poll flags...]
#
# Runs `peregrine bench poll --target` against the Zabbix 6.0 peer
# (../shared/peers/zabbix) with StartPollers=POLLERS: its configuration
# is copied with only StartPollers changed, its zabbix_server (and only
# that: PostgreSQL and the API stay up) is restarted on the copy, the
# bench runs, and the server is restarted on its own configuration, as
# it was found. Run it inside bash bench/quiet.sh (one peer user at a
# time). The peer's setup.sh starts it if it is not running.
set -euo pipefail
pollers=$1; bin=$2; shift 2
ZBX_ROOT=${ZBX_ROOT:-/tmp/zbxpeer}
conf=$ZBX_ROOT/zabbix_server.conf
pidf=$ZBX_ROOT/run/zabbix_server.pid
peer=${PEERS:-$(cd "$(dirname "$0")/../.." && pwd)/shared/peers}/zabbix

stop_server() {
  local pid
  pid=$(cat "$pidf" 2>/dev/null) || return 0
  kill -0 "$pid" 2>/dev/null || return 0
  kill "$pid"
  # Zabbix flushes its history cache before it exits.
  for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
  echo "poll-zabbix: zabbix_server $pid did not stop in 60 s" >&2
  return 1
}
start_server() { # CONF
  zabbix_server -c "$1" </dev/null
  for _ in $(seq 1 60); do
    ss -ltn | grep -q "127.0.0.1:10061 " && return 0
    sleep 1
  done
  echo "poll-zabbix: zabbix_server did not listen on 10061 with $1" >&2
  return 1
}

[ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null || bash "$peer/setup.sh" >/dev/null
orig=$(grep '^StartPollers=' "$conf")
tuned=$(mktemp /tmp/zbxpeer-pollers-XXXXXX.conf)
sed "s/^StartPollers=.*/StartPollers=$pollers/" "$conf" > "$tuned"
chmod 644 "$tuned"
restore() {
  stop_server || true
  start_server "$conf"
  rm -f "$tuned"
  echo "poll-zabbix: zabbix_server back on $conf ($orig)" >&2
}
trap restore EXIT
echo "poll-zabbix: restarting zabbix_server with StartPollers=$pollers (was $orig)" >&2
stop_server
start_server "$tuned"
n=0
for _ in $(seq 1 40); do
  n=$(ps --ppid "$(cat "$pidf")" -o args= | grep -c '^zabbix_server: poller #' || true)
  [ "$n" -ge "$pollers" ] && break
  sleep 0.5
done
echo "poll-zabbix: $n poller processes running" >&2
"$bin" bench poll --target http://127.0.0.1:10088/api_jsonrpc.php --trapper 127.0.0.1:10061 --password zabbix "$@"
