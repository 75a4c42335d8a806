#!/usr/bin/env bash
# bench/quiet.sh: run one benchmark at a time, on a core of its own.
#
#   bash bench/quiet.sh [--check] COMMAND [ARGS...]
#
# Every side-by-side figure in BENCHMARKS.md was measured through this wrapper.
# It does three things:
#
#  1. Takes a machine-wide exclusive lock (flock on $QUIET_LOCK, default
#     /tmp/peregrine-quiet.lock, held on file descriptor 9), so that only one
#     benchmark runs at a time; a second one waits for the first to finish.
#  2. Runs COMMAND pinned to CPU $QUIET_CPU (default 0). Everything COMMAND
#     starts inherits that: the server under test, the bench client, and any
#     database or peer server that COMMAND starts itself.
#  3. When run as root on a machine with more than one CPU, moves the threads
#     of every other process to the remaining CPUs (taskset -a -p) while
#     COMMAND runs, and gives each thread its previous affinity back when
#     COMMAND ends, fails or is interrupted (Ctrl-C reaches both; a SIGTERM
#     sent to this script alone takes effect once COMMAND has ended, so the
#     core stays reserved while it runs). Processes they start meanwhile
#     inherit the other CPUs. Kernel threads and PID 1 are left where they
#     are.
#
# Without root only steps 1 and 2 apply (other users' processes may still run
# on the benchmark's CPU; the script says so). With one CPU only the lock
# applies. COMMAND does not get descriptor 9: a daemon it leaves running can
# never keep the lock. (The bench scripts still start daemons with 9>&-.)
#
# Options and environment:
#   --check      print what would be done (lock state, CPUs, how many processes
#                and threads would move) and exit without running COMMAND
#   QUIET_LOCK   the lock file (default /tmp/peregrine-quiet.lock)
#   QUIET_CPU    the CPU given to COMMAND (default 0)
#   QUIET_ALSO   names of processes already running that belong with COMMAND
#                on its CPU (pgrep -x names, space-separated), e.g. a database
#                started before the run: "postgres zabbix_server php"; their
#                threads are pinned to QUIET_CPU and restored at the end
#
# Examples:
#   bash bench/quiet.sh --check true
#   bash bench/quiet.sh bench/peer-run.sh bench/sidebyside.sh icmp 10
#   QUIET_ALSO="clickhouse-server" bash bench/quiet.sh bench/scripts/clickhouse-side-by-side.sh engine bench/reports/x
set -uo pipefail

LOCK=${QUIET_LOCK:-/tmp/peregrine-quiet.lock}
CPU=${QUIET_CPU:-0}
ALSO=${QUIET_ALSO:-}

usage() {
  sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"
}
say() { echo "quiet.sh: $*" >&2; }

CHECK=0
case "${1:-}" in
-h|--help) usage; exit 0 ;;
--check) CHECK=1; shift ;;
esac
if [ $# -eq 0 ]; then
  usage >&2
  exit 2
fi

# The online CPUs, expanded from /sys's list form ("0-3,6").
cpus=()
IFS=, read -ra ranges < /sys/devices/system/cpu/online
for r in "${ranges[@]}"; do
  if [[ $r == *-* ]]; then
    for ((c = ${r%-*}; c <= ${r#*-}; c++)); do cpus+=("$c"); done
  else
    cpus+=("$r")
  fi
done
others=()
found=0
for c in "${cpus[@]}"; do
  if [ "$c" = "$CPU" ]; then found=1; else others+=("$c"); fi
done
if [ "$found" = 0 ]; then
  say "QUIET_CPU=$CPU is not an online CPU (online: ${cpus[*]})"
  exit 2
fi
OTHERS=$(IFS=,; echo "${others[*]}")

ROOT=0
[ "$(id -u)" = 0 ] && ROOT=1
MOVE=0
[ "$ROOT" = 1 ] && [ ${#others[@]} -gt 0 ] && MOVE=1
PIN=0
[ ${#others[@]} -gt 0 ] && PIN=1

# starttime (field 22 of /proc/ID/stat) tells a thread from a later one that
# reuses its ID.
starttime() {
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }
  set -- $s
  echo "${20}"
}

# movable PID: true for user-space processes other than PID 1, this script and
# its subshells.
movable() {
  local p=$1 cmd=
  [ "$p" = 1 ] || [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && return 1
  # Kernel threads have an empty command line.
  IFS= read -r -d '' cmd < "/proc/$p/cmdline" 2>/dev/null
  [ -n "$cmd" ]
}

# also_pids: the PIDs named by QUIET_ALSO.
also_pids() {
  local n
  # The kernel keeps 15 characters of a process's name (clickhouse-serv).
  for n in $ALSO; do pgrep -x -- "${n:0:15}"; done 2>/dev/null | sort -un
}

if [ "$CHECK" = 1 ]; then
  echo "command:    $*"
  if [ -e "$LOCK" ] && ! flock -n -s "$LOCK" true 2>/dev/null; then
    echo "lock:       $LOCK (held now: the command would wait for it)"
  else
    echo "lock:       $LOCK (free now)"
  fi
  echo "online CPUs: ${cpus[*]}"
  if [ "$PIN" = 1 ]; then
    echo "command on: CPU $CPU (taskset -c $CPU)"
  else
    echo "command on: any CPU (one CPU online: only the lock applies)"
  fi
  if [ "$MOVE" = 1 ]; then
    np=0 nt=0
    for d in /proc/[0-9]*; do
      p=${d#/proc/}
      movable "$p" || continue
      np=$((np + 1))
      for t in "$d"/task/[0-9]*; do [ -e "$t" ] && nt=$((nt + 1)); done
    done
    echo "others:     $np processes ($nt threads) moved to CPU $OTHERS while it runs, then restored"
  elif [ "$PIN" = 1 ]; then
    echo "others:     not moved: not root, so only the lock and the command's pinning apply"
  fi
  if [ -n "$ALSO" ]; then
    echo "also on CPU $CPU: $(also_pids | tr '\n' ' ')($ALSO)"
  fi
  exit 0
fi

# 1. The lock. Created world-writable so that every user of the machine can
# take it; opened read-only (flock does not need more), so that a file another
# user created is usable too.
if [ ! -e "$LOCK" ]; then
  (umask 0; : >> "$LOCK") 2>/dev/null
fi
if ! exec 9< "$LOCK"; then
  say "cannot open the lock file $LOCK (set QUIET_LOCK)"
  exit 2
fi
if ! flock -n -x 9; then
  say "waiting for the benchmark lock $LOCK"
  flock -x 9 || { say "cannot take the lock $LOCK"; exit 2; }
fi

# 3. Move everything else away, remembering where it was. Each record is
# "P pid start cpus" (all threads of a process shared one affinity: restored
# with taskset -a, which also covers threads started meanwhile) or
# "T tid start cpus" (one thread).
STATE=$(mktemp "${TMPDIR:-/tmp}/quiet-affinity.XXXXXX") || exit 2
restore() {
  local kind id start list now
  while read -r kind id start list; do
    now=$(starttime "$id") || continue
    [ "$now" = "$start" ] || continue
    if [ "$kind" = P ]; then
      taskset -a -p -c "$list" "$id" > /dev/null 2>&1
    else
      taskset -p -c "$list" "$id" > /dev/null 2>&1
    fi
  done < "$STATE"
  rm -f "$STATE"
}
trap restore EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# pin PID CPUS: records PID's threads' affinity in $STATE, then sets CPUS.
pin() {
  local p=$1 to=$2 t l first="" same=1 recs=() start
  start=$(starttime "$p") || return 1
  for t in /proc/"$p"/task/[0-9]*; do
    l=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status" 2>/dev/null) || continue
    [ -n "$l" ] || continue
    [ -z "$first" ] && first=$l
    [ "$l" = "$first" ] || same=0
    recs+=("T ${t##*/} $(starttime "$p/task/${t##*/}") $l")
  done
  [ -n "$first" ] || return 1
  if [ "$same" = 1 ]; then
    echo "P $p $start $first" >> "$STATE"
  else
    printf '%s\n' "${recs[@]}" >> "$STATE"
  fi
  taskset -a -p -c "$to" "$p" > /dev/null 2>&1
}

if [ "$MOVE" = 1 ]; then
  also=" $(also_pids | tr '\n' ' ') "
  moved=0 failed=0
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    movable "$p" || continue
    case $also in *" $p "*) continue ;; esac
    if pin "$p" "$OTHERS"; then moved=$((moved + 1)); else failed=$((failed + 1)); fi
  done
  for p in $also; do pin "$p" "$CPU" || failed=$((failed + 1)); done
  note=""
  [ "$failed" -gt 0 ] && note=" ($failed could not be moved: gone, or not movable)"
  say "lock held; CPU $CPU for the command, $moved other processes moved to CPU $OTHERS$note"
elif [ "$PIN" = 1 ]; then
  for p in $(also_pids); do pin "$p" "$CPU"; done
  say "lock held; not root: only the lock and the command's pinning to CPU $CPU apply (other processes may share it)"
else
  say "lock held; one CPU online: only the lock applies"
fi

# 2. The command, on its CPU, without the lock's descriptor.
if [ "$PIN" = 1 ]; then
  taskset -c "$CPU" "$@" 9<&-
else
  "$@" 9<&-
fi
