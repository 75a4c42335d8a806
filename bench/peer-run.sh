#!/usr/bin/env bash
# usage: /work/notes/quietbench bench/peer-run.sh CMD...
# Makes sure the shared Zabbix peer (../shared/peers/zabbix/setup.sh: PostgreSQL, zabbix_server, API)
# runs, then runs CMD. setup.sh is started with fd 9 closed: quietbench holds the machine-wide bench
# lock on fd 9, and daemons started with it open would keep the lock after the benchmark ends.
set -euo pipefail
PEERS=${PEERS:-$(cd "$(dirname "$0")/../../shared/peers" 2>/dev/null && pwd || echo /work/shared/peers)}
"$PEERS/zabbix/setup.sh" >/tmp/peer-run-setup.log 2>&1 9>&- || { cat /tmp/peer-run-setup.log >&2; exit 1; }
exec "$@" 9>&-
