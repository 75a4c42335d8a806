#!/bin/bash
# clickhouse-side-by-side.sh STORE REPORT
#
# One half of the ClickHouse-vs-embedded-engine comparison (issue 16): a
# fresh `peregrine serve` with history.store: STORE (clickhouse or engine)
# and the harness against it: write-scaling (400 and 1,200 targets of 100
# items at 1 s), sender-flood (900k values to 300k trapper items),
# history-read (1M rows, 5 calls) and disk-bytes (5M realistic values).
# About 8 minutes. BIN: the peregrine binary (default bin/peregrine); run
# it from the repository's root.
# Run it under bench/quiet.sh so that the server, ClickHouse (the peer of
# ../shared/peers/clickhouse, started here if it is not running) and the
# bench client share CPU 0; a ClickHouse that was already running is put
# there with QUIET_ALSO=clickhouse-server:
#   QUIET_ALSO=clickhouse-server bash bench/quiet.sh bench/scripts/clickhouse-side-by-side.sh engine REPORT
# The ClickHouse database it uses (pb_bench) is dropped at the end, so the
# peer is left as found.
set -u
STORE=$1 REPORT=$2
BIN=${BIN:-bin/peregrine}
PEERS=${PEERS:-$(cd "$(dirname "$0")/../../../shared/peers" && pwd)}
W=$(mktemp -d "${TMPDIR:-/tmp}/pg-ch-XXXXXX")/$STORE
CH=http://127.0.0.1:18123/
API=http://127.0.0.1:18180/api_jsonrpc.php
rm -rf "$W" && mkdir -p "$W"
chq() { curl -fsS "$CH" --data-binary "$1"; }
if [ "$STORE" = clickhouse ]; then
  bash "$PEERS/clickhouse/setup.sh" >/dev/null || exit 1
  chq "DROP DATABASE IF EXISTS pb_bench"
fi
cat > "$W/p.yaml" <<YAML
data_dir: $W/data
log: {level: warn}
trapper: {listen: "127.0.0.1:18151"}
http: {listen: "127.0.0.1:18180"}
history:
  store: $STORE
  flush_interval: 1m
  clickhouse: {urls: ["$CH"], database: pb_bench}
YAML
date -u
"$BIN" serve -config "$W/p.yaml" > "$W/serve.log" 2>&1 &
SP=$!
for i in $(seq 1 60); do [ -s "$W/data/admin-password" ] && curl -s -m1 http://127.0.0.1:18180/metrics >/dev/null && break; sleep 1; done
common=(--target "$API" --trapper 127.0.0.1:18151 --password-file "$W/data/admin-password" --warmup-time 20s --name "peregrine-$STORE" --quiet)
"$BIN" bench write-scaling,sender-flood,history-read "${common[@]}" --steps 400,1200 --window 60s \
    --values 900k --sizes 1M --reps 5 --drain-timeout 3m --report "$REPORT"
rc=$?
if [ "$STORE" = clickhouse ]; then
  # Bytes in ClickHouse once the spool is empty and the parts merged
  # (OPTIMIZE FINAL: what background merges reach), from system.parts
  # (bytes_on_disk; older servers call it bytes).
  size="while [ \"\$(curl -s http://127.0.0.1:18180/metrics | awk '/^peregrine_clickhouse_spool_values /{print \$2}')\" != 0 ]; do sleep 1; done;
    for t in history history_uint history_str history_text history_log; do curl -fsS $CH --data-binary \"OPTIMIZE TABLE pb_bench.\$t FINAL\"; done;
    curl -fsS $CH --data-binary \"SELECT sum(bytes_on_disk) FROM system.parts WHERE active AND database = 'pb_bench'\" 2>/dev/null ||
    curl -fsS $CH --data-binary \"SELECT sum(bytes) FROM system.parts WHERE active AND database = 'pb_bench'\""
  "$BIN" bench disk-bytes "${common[@]}" --disk-values 5M --size-cmd "$size" --flush-wait 1s --report "$REPORT-disk"
else
  "$BIN" bench disk-bytes "${common[@]}" --disk-values 5M --data-dir "$W/data" --flush-wait 3m --report "$REPORT-disk"
fi
rc=$((rc | $?))
date -u
kill $SP; wait $SP
rm -rf "${W%/*}"
[ "$STORE" = clickhouse ] && chq "DROP DATABASE IF EXISTS pb_bench"
exit $rc
