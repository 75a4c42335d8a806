#!/usr/bin/env bash
# usage: bench/zabbix-private.sh start|init|stop|drop
#
# A private Zabbix 6.0 server + its PHP API beside the shared peer (../shared/peers/zabbix), for the
# side-by-side check benchmarks (ICMP, SNMP, external checks, preprocessing). It exists so that a
# benchmark can change server settings (StartPingers, StartPollers, StartPreprocessors,
# ExternalScripts) or run inside a test network namespace (`unshare -rn`) without restarting or
# reconfiguring the shared peer that other engineers use.
#
# What it shares with the peer: the Debian packages (same zabbix_server 6.0.14 binary and frontend)
# and the peer's PostgreSQL 15 (same settings, fsync on), reached by its unix socket
# ($PEER_ROOT/sock, port 55432) so that it works from inside a network namespace too. What it owns:
# its own database ($ZP_DB, created from the package's schema on first start), its own
# zabbix_server.conf (the peer's, with only the database name, ports, paths and the settings below
# changed), its own copy of the frontend on $ZP_WEBPORT. `stop` stops only what `start` started
# (PID files); `drop` also drops its database; `init` creates the database and writes the
# configuration without starting anything (to fill the database before the server's first start).
#
# Settings (environment; the peer's values by default):
#   ZP_PINGERS (1)  ZP_POLLERS (1)  ZP_PREPROC (2)  ZP_EXTERNAL_SCRIPTS (empty: Zabbix's default)
#   ZP_TRAPPERS (8)  ZP_DBSYNCERS (4)  ZP_ALLOW_ROOT (1 inside a user namespace: only root is mapped)
#   ZP_JAVA_GATEWAY (empty: none)  ZP_JAVA_GATEWAY_PORT (10052)  ZP_JAVA_POLLERS (0; 1 with a gateway)
#   ZP_ODBC_POLLERS (empty: Zabbix's default StartODBCPollers, 1)  ZP_CACHESIZE (512M: CacheSize)
set -euo pipefail
PEER_ROOT=${PEER_ROOT:-/tmp/zbxpeer}
ZP_ROOT=${ZP_ROOT:-/tmp/sbs-zbx}
ZP_DB=${ZP_DB:-zbxsbs}
ZP_PORT=${ZP_PORT:-10071}
ZP_WEBPORT=${ZP_WEBPORT:-10089}
PGPORT=${PGPORT:-55432}
PSQL=(psql -X -q -h "$PEER_ROOT/sock" -p "$PGPORT")

stop() {
  local f
  f=$ZP_ROOT/run/php-web.pid
  if [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
    kill -TERM -- "-$(cat "$f")" 2>/dev/null || kill -TERM "$(cat "$f")"
    echo "zabbix-private: stopped php ($(cat "$f"))" >&2
  fi
  rm -f "$f"
  f=$ZP_ROOT/run/zabbix_server.pid
  if [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
    local p; p=$(cat "$f"); kill -TERM "$p"
    for _ in $(seq 1 120); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    echo "zabbix-private: stopped zabbix_server ($p)" >&2
  fi
}

case "${1:-}" in
stop) stop; exit 0 ;;
drop) stop; "${PSQL[@]}" -U postgres -c "drop database if exists $ZP_DB"; exit 0 ;;
start|init) ;;
*) echo "usage: $0 start|init|stop|drop" >&2; exit 2 ;;
esac

[ -S "$PEER_ROOT/sock/.s.PGSQL.$PGPORT" ] || { echo "zabbix-private: the peer's PostgreSQL is not running: run ../shared/peers/zabbix/setup.sh first" >&2; exit 1; }
mkdir -p "$ZP_ROOT"/{log,run,scripts}
chmod 1777 "$ZP_ROOT/log" "$ZP_ROOT/run"
if ! "${PSQL[@]}" -U postgres -tAc "select 1 from pg_database where datname='$ZP_DB'" | grep -q 1; then
  "${PSQL[@]}" -U postgres -c "create database $ZP_DB owner zabbix encoding 'UTF8' template template0"
  zcat /usr/share/zabbix-server-pgsql/{schema,images,data}.sql.gz | "${PSQL[@]}" -U zabbix -d "$ZP_DB" -v ON_ERROR_STOP=1 >/dev/null
  echo "zabbix-private: created database $ZP_DB" >&2
fi

# The peer's configuration (../shared/peers/zabbix/setup.sh) with our paths, ports and database.
{
  sed -e "/^ListenPort=/d;/^LogFile=/d;/^PidFile=/d;/^SocketDir=/d;/^TmpDir=/d;/^DBHost=/d;/^DBName=/d" \
      -e "/^StartPingers=/d;/^StartPollers=/d;/^StartPreprocessors=/d;/^StartTrappers=/d;/^StartDBSyncers=/d" \
      -e "/^JavaGateway/d;/^StartJavaPollers=/d;/^AllowRoot=/d;/^User=/d;/^ExternalScripts=/d;/^CacheSize=/d;/^HistoryCacheSize=/d;/^HistoryIndexCacheSize=/d" \
      "$PEER_ROOT/zabbix_server.conf"
  cat <<ZC
ListenPort=$ZP_PORT
LogFile=$ZP_ROOT/log/zabbix_server.log
PidFile=$ZP_ROOT/run/zabbix_server.pid
SocketDir=$ZP_ROOT/run
TmpDir=$ZP_ROOT/run
DBHost=$PEER_ROOT/sock
DBName=$ZP_DB
StartPingers=${ZP_PINGERS:-1}
StartPollers=${ZP_POLLERS:-1}
StartPreprocessors=${ZP_PREPROC:-2}
StartTrappers=${ZP_TRAPPERS:-8}
StartDBSyncers=${ZP_DBSYNCERS:-4}
CacheSize=${ZP_CACHESIZE:-512M}
HistoryCacheSize=512M
HistoryIndexCacheSize=256M
AllowRoot=${ZP_ALLOW_ROOT:-1}
User=zabbix
ZC
  [ -n "${ZP_EXTERNAL_SCRIPTS:-}" ] && echo "ExternalScripts=$ZP_EXTERNAL_SCRIPTS"
  if [ -n "${ZP_JAVA_GATEWAY:-}" ]; then
    echo "JavaGateway=$ZP_JAVA_GATEWAY"
    echo "JavaGatewayPort=${ZP_JAVA_GATEWAY_PORT:-10052}"
    echo "StartJavaPollers=${ZP_JAVA_POLLERS:-1}"
  fi
  if [ -n "${ZP_ODBC_POLLERS:-}" ]; then echo "StartODBCPollers=$ZP_ODBC_POLLERS"; fi
} > "$ZP_ROOT/zabbix_server.conf"

if [ ! -f "$ZP_ROOT/web/api_jsonrpc.php" ]; then
  rm -rf "$ZP_ROOT/web"; cp -a /usr/share/zabbix "$ZP_ROOT/web"
fi
sed -i "s|const CONFIG_FILE_PATH = '.*';|const CONFIG_FILE_PATH = '$ZP_ROOT/web/conf/zabbix.conf.php';|" \
  "$ZP_ROOT/web/include/classes/core/CConfigFile.php"
cat > "$ZP_ROOT/web/conf/zabbix.conf.php" <<PHPC
<?php
\$DB['TYPE']     = 'POSTGRESQL';
\$DB['SERVER']   = '$PEER_ROOT/sock';
\$DB['PORT']     = '$PGPORT';
\$DB['DATABASE'] = '$ZP_DB';
\$DB['USER']     = 'zabbix';
\$DB['PASSWORD'] = 'zabbix';
\$DB['SCHEMA']   = '';
\$DB['ENCRYPTION'] = false;
\$DB['KEY_FILE'] = '';
\$DB['CERT_FILE'] = '';
\$DB['CA_FILE'] = '';
\$DB['VERIFY_HOST'] = false;
\$DB['CIPHER_LIST'] = '';
\$DB['VAULT_URL'] = '';
\$DB['VAULT_DB_PATH'] = '';
\$DB['VAULT_TOKEN'] = '';
\$DB['DOUBLE_IEEE754'] = true;
\$ZBX_SERVER      = '127.0.0.1';
\$ZBX_SERVER_PORT = '$ZP_PORT';
\$ZBX_SERVER_NAME = 'sbs-private';
\$IMAGE_FORMAT_DEFAULT = IMAGE_FORMAT_PNG;
PHPC

[ "$1" = init ] && exit 0
stop
# 9>&-: the daemons must not inherit a bench lock held on fd 9 (a wrapper that passes it on), or
# they would hold the machine-wide benchmark lock for as long as they run.
zabbix_server -c "$ZP_ROOT/zabbix_server.conf" </dev/null 9>&-
for _ in $(seq 1 60); do [ -f "$ZP_ROOT/run/zabbix_server.pid" ] && break; sleep 0.5; done
PHP_CLI_SERVER_WORKERS=${PHP_WORKERS:-2} setsid php \
    -d memory_limit=4G -d max_execution_time=0 -d post_max_size=256M -d date.timezone=UTC \
    -S 127.0.0.1:$ZP_WEBPORT -t "$ZP_ROOT/web" >"$ZP_ROOT/log/php-web.log" 2>&1 </dev/null 9>&- &
echo $! > "$ZP_ROOT/run/php-web.pid"
for _ in $(seq 1 60); do
  curl -s -m 5 -H 'Content-Type: application/json-rpc' -d '{"jsonrpc":"2.0","method":"apiinfo.version","params":{},"id":1}' \
    "http://127.0.0.1:$ZP_WEBPORT/api_jsonrpc.php" | grep -q result && break
  sleep 0.5
done
echo "zabbix-private: zabbix_server (pid $(cat "$ZP_ROOT/run/zabbix_server.pid"), StartPingers=${ZP_PINGERS:-1} StartPollers=${ZP_POLLERS:-1} StartPreprocessors=${ZP_PREPROC:-2}) api http://127.0.0.1:$ZP_WEBPORT/api_jsonrpc.php trapper 127.0.0.1:$ZP_PORT" >&2
