# shellcheck shell=bash
# Background processes kept under one state directory, shared by hack/cluster/cluster.sh and
# hack/local-operator.sh. Sourced, not run. Each process NAME has <state>/pids/NAME.pid and
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
# processes, see is_ours) does not depend on the caller's working directory.
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

pid_file() { printf '%s/pids/%s.pid' "$STATE_DIR" "$1"; }
log_file() { printf '%s/logs/%s.log' "$STATE_DIR" "$1"; }

# ---------------------------------------------------------------------------------------------
# Processes

# is_ours PID: the pid is alive and its command line names our state dir. The second check keeps
# a recycled pid (another program that got the number after ours died) from being taken for
# ours, and from being killed by stop_process. Zombies count as dead: nobody may reap them here.
is_ours() {
	local pid=$1 state
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ -r /proc/$pid/cmdline ]] || return 1
	state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
	[[ $state != Z ]] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$STATE_DIR/"
}

# component_pid NAME: the recorded pid of NAME if that process is still ours and alive.
component_pid() {
	local file pid
	file=$(pid_file "$1")
	[[ -f $file ]] || return 1
	pid=$(<"$file")
	is_ours "$pid" || return 1
	printf '%s' "$pid"
}

is_running() { component_pid "$1" >/dev/null; }

# start_process NAME BINARY ARGS...: runs it in its own session (setsid), so it outlives this
# script and is not hit by signals sent to the caller's process group; the child writes its own
# pid before exec, which stays right even if setsid has to fork. Some argument must name a path
# under STATE_DIR, or is_ours will not recognise the process.
start_process() {
	local name=$1
	shift
	local pidfile logfile
	pidfile=$(pid_file "$name")
	logfile=$(log_file "$name")
	rm -f "$pidfile"
	printf '\n==== %s starting %s\n' "$(date -u +%FT%TZ)" "$name" >>"$logfile"
	# shellcheck disable=SC2016 # $$ and $@ belong to the inner shell.
	if [[ -n $LOCK_FD ]]; then
		setsid bash -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$pidfile" "$@" \
			</dev/null >>"$logfile" 2>&1 {LOCK_FD}>&- &
	else
		setsid bash -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$pidfile" "$@" \
			</dev/null >>"$logfile" 2>&1 &
	fi
	local waited=0
	until [[ -s $pidfile ]]; do
		((waited++ < 50)) || die "$name did not start (see $logfile)"
		sleep 0.1
	done
	log "started $name (pid $(<"$pidfile"), log $logfile)"
}

# stop_process NAME: SIGTERM, then SIGKILL after STOP_TIMEOUT; returns once the process is gone.
stop_process() {
	local name=$1 pid
	if ! pid=$(component_pid "$name"); then
		rm -f "$(pid_file "$name")"
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	if ! wait_gone "$pid" "$STOP_TIMEOUT"; then
		log "$name (pid $pid) still running after ${STOP_TIMEOUT}s, sending SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
		wait_gone "$pid" 5 || die "$name (pid $pid) survived SIGKILL"
	fi
	rm -f "$(pid_file "$name")"
	log "stopped $name (pid $pid)"
}

# wait_gone PID SECONDS
wait_gone() {
	local pid=$1 deadline=$((SECONDS + $2))
	while is_ours "$pid"; do
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
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
