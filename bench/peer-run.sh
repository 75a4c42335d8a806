#!/usr/bin/env bash
# usage: bash bench/quiet.sh bench/peer-run.sh CMD...
# Makes sure the shared Zabbix peer (../shared/peers/zabbix/setup.sh: PostgreSQL, zabbix_server, API)
# runs, then runs CMD. setup.sh is started with fd 9 closed: a wrapper that holds the machine-wide
# bench lock on fd 9 and passes it on would otherwise leave it with the daemons after the benchmark
# ends (bench/quiet.sh does not pass it on; this guards against one that does).
set -euo pipefail
PEERS=${PEERS:-$(cd "$(dirname "$0")/../../shared/peers" && pwd)}
"$PEERS/zabbix/setup.sh" >/tmp/peer-run-setup.log 2>&1 9>&- || { cat /tmp/peer-run-setup.log >&2; exit 1; }
exec "$@" 9>&-
