# shellcheck shell=bash
# Background processes kept under one state directory, for hack/cluster/cluster.sh. Sourced, not
# run. Each process NAME has <state>/pids/NAME.pid and
# <state>/logs/NAME.log, and runs in its own session, so it outlives the script that started it.
#
# The sourcing script sets, before calling anything here:
#   STATE_DIR     the state directory; resolve_state_dir makes it absolute
#   STOP_TIMEOUT  seconds stop_process waits after SIGTERM before it sends SIGKILL
#   LOG_PREFIX    what log and die put before each message ("cluster", "operator")
# and creates <state>/pids and <state>/logs. Every function here reads them when it is called.

log() { printf '%s: %s\n' "$LOG_PREFIX" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------------------------------------
# State layout

# Absolute, so that the path embedded in each process's command line (used to recognise our
# processes, see component_pid) does not depend on the caller's working directory.
resolve_state_dir() {
	mkdir -p "$STATE_DIR"
	STATE_DIR=$(cd "$STATE_DIR" && pwd)
}

# lock_state_dir: one start or stop at a time per state dir (parallel test jobs may all start).
# The lock's descriptor is closed in every started process (see start_process), or the first
# process would hold the lock for its whole life.
LOCK_FD=
lock_state_dir() {
	exec {LOCK_FD}>"$STATE_DIR/.lock"
	flock --timeout 120 "$LOCK_FD" || die "another $(basename "$0") holds $STATE_DIR/.lock"
}

log_file() { printf '%s/logs/%s.log' "$STATE_DIR" "$1"; }

# ---------------------------------------------------------------------------------------------
# Processes: started, found and stopped by hack/processes (devkit.Daemons in hack/devkit, the one implementation
# of process supervision, the Go suites' too), whose path make passes in PROCESSES. A recorded pid
# counts only while that process lives and its command line names a path under STATE_DIR, so a
# recycled pid is never taken for ours nor signalled: some argument of every process started here
# must name a path under STATE_DIR, and hack/processes refuses to start one that does not.

processes() {
	: "${PROCESSES:?the path of hack/processes: run this through make}"
	"$PROCESSES" "$1" -state "$STATE_DIR" "${@:2}"
}

# component_pid NAME: the recorded pid of NAME if that process is still ours and alive.
component_pid() { processes pid "$1"; }

is_running() { component_pid "$1" >/dev/null; }

# start_process NAME BINARY ARGS...: runs it in its own session, so it outlives this script and
# is not hit by signals sent to the caller's process group. The state lock's descriptor is closed
# for it, or the process would hold the lock for its whole life.
start_process() {
	local name=$1 pid
	shift
	if [[ -n $LOCK_FD ]]; then
		pid=$(processes start "$name" "$@" {LOCK_FD}>&-) || die "$name did not start (see $(log_file "$name"))"
	else
		pid=$(processes start "$name" "$@") || die "$name did not start (see $(log_file "$name"))"
	fi
	log "started $name (pid $pid, log $(log_file "$name"))"
}

# stop_process NAME: SIGTERM, then SIGKILL after STOP_TIMEOUT; returns once the process is gone.
stop_process() {
	local out
	out=$(processes stop -timeout "${STOP_TIMEOUT}s" "$1") || die "could not stop $1"
	[[ -z $out ]] || log "$out"
}

# fail_start NAME MESSAGE: stop with the end of the process's log, where the reason usually is.
fail_start() {
	log "error: $2; last lines of $(log_file "$1"):"
	tail -n 20 "$(log_file "$1")" >&2 || true
	exit 1
}

# wait_until NAME SECONDS COMMAND...: polls COMMAND; fails early if process NAME died.
wait_until() {
	local name=$1 deadline=$((SECONDS + $2))
	shift 2
	until "$@" >/dev/null 2>&1; do
		is_running "$name" || fail_start "$name" "$name exited"
		((SECONDS < deadline)) || fail_start "$name" "timed out waiting for: $*"
		sleep 0.3
	done
}

# ---------------------------------------------------------------------------------------------
# Ports

port_in_use() { [[ -n $(ss -Htln "sport = :$1") ]]; }

# pick_free_port [TAKEN...]: a port nobody listens on, other than TAKEN. Below the usual
# ephemeral range (32768+), so outgoing connections do not take it meanwhile.
pick_free_port() {
	local port taken=" $* " tries=0
	while ((tries++ < 200)); do
		port=$((20000 + RANDOM % 12000))
		[[ $taken == *" $port "* ]] && continue
		port_in_use "$port" || { printf '%s' "$port"; return 0; }
	done
	die "no free port found"
}
