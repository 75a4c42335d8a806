#!/usr/bin/env bash
# usage: bench/scripts/odbc-pg.sh start|stop
#
# A private PostgreSQL 15 for the database monitor benchmarks (bench checks --kind odbc): the
# database the items query, not a server's own. Data under $OPG_ROOT (default /tmp/odbc-bench-pg),
# listening on 127.0.0.1:$OPG_PORT (default 55498) only, fsync off; the role $OPG_USER (default
# mon) with password $OPG_PASSWORD (default mon) logs in with scram-sha-256 over TCP, as the items
# do. Run as root it runs PostgreSQL as the postgres user. `stop` stops only what `start` started.
# Both servers under test reach it as "Driver=PostgreSQL Unicode;Server=127.0.0.1;Port=55498;
# Database=postgres" (Debian's odbc-postgresql registers the driver in /etc/odbcinst.ini).
set -euo pipefail
OPG_ROOT=${OPG_ROOT:-/tmp/odbc-bench-pg}
OPG_PORT=${OPG_PORT:-55498}
OPG_USER=${OPG_USER:-mon}
OPG_PASSWORD=${OPG_PASSWORD:-mon}
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case "${1:-}" in
stop)
  [ -f "$OPG_ROOT/data/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$OPG_ROOT/data" -m fast -w stop >/dev/null || true
  exit 0 ;;
start) ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
if [ ! -f "$OPG_ROOT/data/PG_VERSION" ]; then
  mkdir -p "$OPG_ROOT"
  [ "$(id -u)" = 0 ] && chown postgres "$OPG_ROOT"
  as_pg "$PGBIN/initdb" -D "$OPG_ROOT/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
  printf 'local all all trust\nhost all %s 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 trust\n' "$OPG_USER" > "$OPG_ROOT/data/pg_hba.conf"
  [ "$(id -u)" = 0 ] && chown postgres "$OPG_ROOT/data/pg_hba.conf"
fi
if ! as_pg "$PGBIN/pg_ctl" -D "$OPG_ROOT/data" status >/dev/null 2>&1; then
  # 9>&-: the server must not inherit a bench lock held on fd 9.
  as_pg "$PGBIN/pg_ctl" -D "$OPG_ROOT/data" -l "$OPG_ROOT/log" -w \
    -o "-p $OPG_PORT -k $OPG_ROOT -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300" start >/dev/null 9>&-
fi
psql -X -q -h 127.0.0.1 -p "$OPG_PORT" -U postgres -d postgres -tAc "select 1 from pg_roles where rolname='$OPG_USER'" | grep -q 1 ||
  psql -X -q -h 127.0.0.1 -p "$OPG_PORT" -U postgres -d postgres -c "create role $OPG_USER login password '$OPG_PASSWORD'"
echo "odbc-pg: PostgreSQL on 127.0.0.1:$OPG_PORT (data $OPG_ROOT/data), role $OPG_USER" >&2
