#!/usr/bin/env bash
# usage: bench/ab.sh [-r ROUNDS] [-o DIR] OLD_BINARY NEW_BINARY -- BENCH_ARGS...
#
# Before/after on the same machine in the same run: starts a fresh
# `peregrine serve` of OLD_BINARY, then of NEW_BINARY, ROUNDS times (default
# 2), alternating, each through bench/peregrine-run.sh (its own data
# directory and ports), and runs `NEW_BINARY bench BENCH_ARGS` against it,
# so that the harness is the same for both and only the server differs.
# Alternating rather than running all of OLD then all of NEW spreads a
# machine's drift (other load, thermal, a noisy neighbour) over both.
# Reports go to DIR/<round>-old and DIR/<round>-new (default: a mktemp
# directory); the headline lines of each are printed at the end.
#
# Example (issue 23's check that a refactoring changed no figure):
#   git worktree add ../peregrine-old HEAD~10 && (cd ../peregrine-old && go build -o bin/peregrine ./cmd/peregrine)
#   go build -o bin/peregrine ./cmd/peregrine
#   bench/ab.sh ../peregrine-old/bin/peregrine bin/peregrine -- ingest-max,history-read \
#       --items 20000 --rates 100k,200k,400k --step 10s --sizes 100000,1000000 --reps 5 --warmup-time 10s
# For one core each, run it under bench/quiet.sh.
set -euo pipefail
ROUNDS=2
OUT=
while getopts r:o: opt; do
  case $opt in
    r) ROUNDS=$OPTARG ;;
    o) OUT=$OPTARG ;;
    *) sed -n '2,19p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -lt 3 ] || [ "$3" != "--" ]; then
  sed -n '2,19p' "$0"
  exit 2
fi
OLD=$(realpath "$1") NEW=$(realpath "$2")
shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d /tmp/peregrine-ab-XXXXXX)}
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for which in old new; do
    bin=$OLD
    [ $which = new ] && bin=$NEW
    rep="$OUT/$r-$which"
    echo "== round $r: $which ($bin)"
    # shellcheck disable=SC2016 # expanded by the inner shell, where peregrine-run.sh sets them
    "$HERE/peregrine-run.sh" "$bin" sh -c 'bin=$0 rep=$1; shift; "$bin" bench "$@" --target "$PG_API" --trapper "$PG_TRAPPER" --password-file "$PG_PASSWORD_FILE" --report "$rep"' \
      "$NEW" "$rep" "$@" >"$rep.log" 2>&1 || { echo "round $r $which failed: see $rep.log"; exit 1; }
  done
done
echo
echo "reports in $OUT"
for r in $(seq 1 "$ROUNDS"); do
  for which in old new; do
    echo "== round $r $which"
    grep -E '^\*\*Highest sustained|^\| [0-9,]+ \| [0-9,]+ \| [0-9,]+ \| [0-9]+ \| [0-9]+ \| (yes|no|\*\*no\*\*)|^\| [0-9,]+ \| [0-9]+ \| [0-9]+ \| [0-9]+ \(' "$OUT/$r-$which/report.md" || true
  done
done
