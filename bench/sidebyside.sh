#!/usr/bin/env bash
# usage: bash bench/quiet.sh bench/peer-run.sh bench/sidebyside.sh WHAT [ARGS]
#   WHAT: icmp PINGERS | snmp sweep|rate POLLERS... | external sweep|rate POLLERS... | preprocess [peregrine] [PREPROCESSORS...]
#         | pipeline [peregrine] [PREPROCESSORS...]   (issue 30 part 3: chain + one last() trigger per item)
#         | poll [POLLERS...]   (issue 30 part 5: CPU per passive agent check, with the TCP floor)
#         | jmx sweep|rate JAVAPOLLERS...
#         | odbc sweep|rate ODBCPOLLERS...
# The side-by-side runs of BENCHMARKS.md (issues 12 and 14): the same harness against a fresh
# `peregrine serve` (bench/peregrine-run.sh) and a private Zabbix 6.0 (bench/zabbix-private.sh: the
# peer's packages, configuration and PostgreSQL, its own database; only the process counts named
# change). Reports go under $R (default bench/reports/DATE-WHAT-side-by-side). BIN: the peregrine
# binary (default bin/peregrine). Run from the repository's root, as root (namespaces, raw sockets).
set -euo pipefail
BIN=${BIN:-bin/peregrine}
WHAT=${1:?usage: $0 icmp|snmp|external|preprocess ...}; shift
R=${R:-bench/reports/$(date -u +%F)-$WHAT-side-by-side}
ZAPI=http://127.0.0.1:10089/api_jsonrpc.php
ZSTOP="bench/zabbix-private.sh stop"
# A command run beside a fresh peregrine serve: $PG_API, $PG_TRAPPER, $PG_PASSWORD_FILE are its.
beside() { bench/peregrine-run.sh "$BIN" sh -c "$1"; }
case $WHAT in
icmp)
  P=${1:-1}
  "$BIN" bench icmp --rounds 3 --zabbix-rounds 2 --zabbix-target $ZAPI --zabbix-start "ZP_PINGERS=$P bench/zabbix-private.sh start" \
    --zabbix-stop "$ZSTOP" --zabbix-name zabbix-pingers-$P --zabbix-timeout 6m --report "$R/pingers-$P" ;;
snmp)
  MODE=${1:-sweep}; shift || true
  A="--kind snmp --hosts 500 --items-per-host 64 --mode $MODE --rounds 2 --timeout 3m --delay 5s --warmup 15s --window 30s"
  beside "$BIN bench checks $A --target \$PG_API --password \"\$(cat \$PG_PASSWORD_FILE)\" --settle 3s --name peregrine --report $R/$MODE-peregrine"
  [ $# -gt 0 ] || set -- 1 5
  for P in "$@"; do
    "$BIN" bench checks $A --target $ZAPI --start "ZP_POLLERS=$P bench/zabbix-private.sh start" --stop "$ZSTOP" \
      --name zabbix-pollers-$P --report "$R/$MODE-zabbix-pollers-$P"
  done ;;
external)
  MODE=${1:-sweep}; shift || true
  # Zabbix runs external checks from its ExternalScripts directory: there, a symlink to the plugin.
  mkdir -p /tmp/sbs-zbx/scripts && ln -sf /usr/lib/nagios/plugins/check_dummy /tmp/sbs-zbx/scripts/check_dummy
  A="--kind external --hosts 100 --items-per-host 100 --mode $MODE --rounds 2 --timeout 3m --delay 10s --warmup 20s --window 30s"
  beside "$BIN bench checks $A --target \$PG_API --password \"\$(cat \$PG_PASSWORD_FILE)\" --settle 3s --name peregrine --report $R/$MODE-peregrine"
  [ $# -gt 0 ] || set -- 1 5 32
  for P in "$@"; do
    "$BIN" bench checks $A --target $ZAPI --start "ZP_POLLERS=$P ZP_EXTERNAL_SCRIPTS=/tmp/sbs-zbx/scripts bench/zabbix-private.sh start" \
      --stop "$ZSTOP" --name zabbix-pollers-$P --report "$R/$MODE-zabbix-pollers-$P"
  done ;;
odbc)
  MODE=${1:-sweep}; shift || true
  # The database the items query: a private PostgreSQL on 127.0.0.1:55498 (bench/scripts/odbc-pg.sh),
  # reached by both servers through the same connection string; its CPU is counted per check too.
  bench/scripts/odbc-pg.sh start
  export ODBC_CONN="Driver=PostgreSQL Unicode;Server=127.0.0.1;Port=55498;Database=postgres"
  A="--kind odbc --hosts 20 --items-per-host 100 --mode $MODE --rounds 2 --timeout 5m --delay 10s --warmup 20s --window 30s --odbc-user mon --odbc-password mon --db-cpu-ports 55498"
  beside "$BIN bench checks $A --odbc-conn \"\$ODBC_CONN\" --target \$PG_API --password \"\$(cat \$PG_PASSWORD_FILE)\" --settle 3s --cpu-ports 18391 --name peregrine --report $R/$MODE-peregrine"
  [ $# -gt 0 ] || set -- 1 5
  for P in "$@"; do
    # --cpu-ports 10071: zabbix_server's trapper, so its process tree (the ODBC pollers among it).
    "$BIN" bench checks $A --odbc-conn "$ODBC_CONN" --target $ZAPI --start "ZP_ODBC_POLLERS=$P bench/zabbix-private.sh start" --stop "$ZSTOP" \
      --cpu-ports 10071 --name zabbix-odbcpollers-$P --report "$R/$MODE-zabbix-odbcpollers-$P"
  done
  bench/scripts/odbc-pg.sh stop ;;
preprocess)
  A="--pp-items 10000 --pp-values 1M --pp-masters 1000 --pp-dependents 10 --pp-rounds 100 --warmup-time 20s --quiet"
  for P in "$@"; do
    if [ "$P" = peregrine ]; then
      beside "$BIN bench preprocess $A --target \$PG_API --trapper \$PG_TRAPPER --password-file \$PG_PASSWORD_FILE --name peregrine --report $R/peregrine"
      continue
    fi
    ZP_PREPROC=$P bench/zabbix-private.sh start
    "$BIN" bench preprocess $A --target $ZAPI --trapper 127.0.0.1:10071 --password zabbix --cpu-ports 55432 \
      --name zabbix-preprocessors-$P --report "$R/zabbix-preprocessors-$P" || { $ZSTOP; exit 1; }
    $ZSTOP
  done ;;
poll)
  # CPU per passive agent check: Peregrine's poller (bench poll, in process) and a private
  # Zabbix's pollers on the same simulated agents, each run with the TCP floor measured first
  # (--floor); the shared peer is not restarted.
  A="--floor --steps ${POLL_STEPS:-100,200,400} --items-per-host 50 --interval 5s --window 10s --agents 1000"
  "$BIN" bench poll $A --report "$R/peregrine"
  [ $# -gt 0 ] || set -- 5
  for P in "$@"; do
    ZP_POLLERS=$P bench/zabbix-private.sh start
    "$BIN" bench poll $A --target $ZAPI --trapper 127.0.0.1:10071 --password zabbix \
      --report "$R/zabbix-pollers-$P" || { $ZSTOP; exit 1; }
    $ZSTOP
  done ;;
pipeline)
  # Every stage on, as loadgen's two-core figure: 5,000 float trapper items, each with the
  # two-step chain and one last() trigger never reached (every value evaluated, no event),
  # durable history; each server at its own saturation (the sender goes as fast as it can).
  A="--pp-items 5000 --pp-triggers 1 --pp-values ${PP_VALUES:-2M} --pp-masters 0 --warmup-time 20s --quiet"
  for P in "$@"; do
    if [ "$P" = peregrine ]; then
      beside "$BIN bench preprocess $A --target \$PG_API --trapper \$PG_TRAPPER --password-file \$PG_PASSWORD_FILE --name peregrine --report $R/peregrine"
      continue
    fi
    ZP_PREPROC=$P bench/zabbix-private.sh start
    "$BIN" bench preprocess $A --target $ZAPI --trapper 127.0.0.1:10071 --password zabbix --cpu-ports 55432 \
      --name zabbix-preprocessors-$P --report "$R/zabbix-preprocessors-$P" || { $ZSTOP; exit 1; }
    $ZSTOP
  done ;;
jmx)
  MODE=${1:-rate}; shift || true
  [ $# -gt 0 ] || set -- 5
  # Zabbix's CPU includes the PostgreSQL it writes history to (the peer's: port 55432, whose own
  # zabbix_server is idle meanwhile); Peregrine's store is in its process.
  # One Zabbix Java gateway (Debian's, 6.0.14) serves both servers, and one JVM with remote JMX is
  # every host's JMX interface: the gateway's own jar started a second time, which needs no
  # compiler. Both are stopped at the end. JMX_HOSTS x 32 items (one request per host and round).
  JVM_PORT=19911 GW_PORT=19913 GW_POLLERS=${GW_POLLERS:-10}
  D=$(mktemp -d /tmp/sbs-jmx-XXXXXX)
  printf '<configuration><root level="warn"/></configuration>\n' > "$D/logback.xml"
  java -Xmx64m -Dcom.sun.management.jmxremote.port=$JVM_PORT -Dcom.sun.management.jmxremote.rmi.port=$JVM_PORT \
    -Dcom.sun.management.jmxremote.host=127.0.0.1 -Djava.rmi.server.hostname=127.0.0.1 \
    -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false \
    -Dzabbix.listenIP=127.0.0.1 -Dzabbix.listenPort=19912 -Dlogback.configurationFile="$D/logback.xml" \
    -jar /usr/sbin/zabbix-java-gateway.jar >"$D/jvm.log" 2>&1 9>&- &
  JVM=$!
  java -Xmx256m -Dzabbix.listenIP=127.0.0.1 -Dzabbix.listenPort=$GW_PORT -Dzabbix.startPollers=$GW_POLLERS \
    -Dzabbix.timeout=3 -Dsun.rmi.transport.tcp.responseTimeout=3000 -Dlogback.configurationFile="$D/logback.xml" \
    -jar /usr/sbin/zabbix-java-gateway.jar >"$D/gw.log" 2>&1 9>&- &
  GW=$!
  trap 'kill $JVM $GW 2>/dev/null; wait $JVM $GW 2>/dev/null || true; rm -rf "$D"' EXIT
  for _ in $(seq 1 100); do ss -ltn | grep -q "127.0.0.1:$JVM_PORT " && ss -ltn | grep -q "127.0.0.1:$GW_PORT " && break; sleep 0.2; done
  A="--kind jmx --jmx-addr 127.0.0.1:$JVM_PORT --hosts ${JMX_HOSTS:-200} --items-per-host 32 --mode $MODE --rounds 2 --timeout 3m --delay 10s --warmup 20s --window 30s --gateway-port $GW_PORT"
  # A JAVAPOLLERS value given twice measures twice ($MODE-1-..., $MODE-2-... in the report names): the first pair
  # runs while the gateway's JIT still compiles.
  N=0
  for P in "$@"; do
    N=$((N + 1))
    printf 'jmx:\n  gateway: 127.0.0.1\n  gateway_port: %s\n  max_connections: %s\n' $GW_PORT "$P" > "$D/peregrine.yaml"
    PG_CONFIG="$D/peregrine.yaml" beside "$BIN bench checks $A --cpu-ports 18391 --target \$PG_API --password \"\$(cat \$PG_PASSWORD_FILE)\" --settle 3s --name peregrine-conns-$P --report $R/$MODE-$N-peregrine-conns-$P"
    "$BIN" bench checks $A --cpu-ports 10071,55432 --target $ZAPI \
      --start "ZP_JAVA_GATEWAY=127.0.0.1 ZP_JAVA_GATEWAY_PORT=$GW_PORT ZP_JAVA_POLLERS=$P bench/zabbix-private.sh start" --stop "$ZSTOP" \
      --name zabbix-javapollers-$P --report "$R/$MODE-$N-zabbix-javapollers-$P"
  done ;;
*) echo "unknown: $WHAT" >&2; exit 2 ;;
esac
