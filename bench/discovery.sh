#!/usr/bin/env bash
# usage: bash bench/quiet.sh bench/discovery.sh [BENCH DISCOVERY FLAGS...]
# Network discovery side by side (docs/bench/discovery.md): builds peregrine, runs
# `peregrine bench discovery` against the Zabbix 6.0 peer ($ZBX_API, Admin / $ZBX_PASSWORD), then
# against a fresh Peregrine started by bench/peregrine-run.sh, with the same flags (default: one TCP
# check over 127.1.0.0/21, every other address listening; loopback only). Each side's report goes
# to stdout under a "== NAME" line.
set -euo pipefail
cd "$(dirname "$0")/.."
ZBX_API=${ZBX_API:-http://127.0.0.1:10088/api_jsonrpc.php}
ZBX_PASSWORD=${ZBX_PASSWORD:-zabbix}
mkdir -p bin
go build -o bin/peregrine ./cmd/peregrine
echo "== zabbix ($ZBX_API)"
bin/peregrine bench discovery --target "$ZBX_API" --password "$ZBX_PASSWORD" "$@"
echo "== peregrine"
bench/peregrine-run.sh bin/peregrine sh -c 'bin/peregrine bench discovery --target "$PG_API" --password-file "$PG_PASSWORD_FILE" "$@"' sh "$@"
