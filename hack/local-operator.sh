#!/usr/bin/env bash
# Runs the operator's manager on this machine, outside the cluster, as the operator's
# ServiceAccount (oaat-operator-system/oaat-operator-controller-manager): it holds exactly the
# permissions that config/rbac grants, as it would in its Deployment. Used by make demo.
#
# Usage: local-operator.sh prepare | start | stop [--purge] | status
#   prepare  apply config/local (CRDs, RBAC, ServiceAccount), wait for the CRDs, mint a token for
#            the ServiceAccount and write <state>/kubeconfig with it; prints that path
#   start    prepare, then start the manager unless it runs, and wait until it is ready; prints
#            the path of its log
#   stop     SIGTERM, then SIGKILL after a bound; --purge also deletes the state directory
#   status   exits 0 if the manager runs
#
# Environment:
#   KUBECTL, KUSTOMIZE    binaries (prepare, start)
#   MANAGER               the manager binary, go build -o bin/manager ./cmd (start)
#   CLUSTER_KUBECONFIG    admin kubeconfig of the cluster (default: that of hack/cluster/cluster.sh)
#   OAAT_OPERATOR_DIR     state directory (default <repo>/.state/operator)
#   OAAT_OPERATOR_ARGS    extra manager arguments, split on spaces (start), e.g. --zap-log-level=debug
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)

STATE_DIR=${OAAT_OPERATOR_DIR:-$REPO_ROOT/.state/operator}
CLUSTER_KUBECONFIG=${CLUSTER_KUBECONFIG:-${OAAT_CLUSTER_DIR:-$REPO_ROOT/.state/cluster}/kubeconfig}

# Where config/local puts the ServiceAccount (support.OperatorNamespace): the leader election
# Lease goes there too, where config/rbac lets the ServiceAccount manage Leases.
NAMESPACE=oaat-operator-system
TOKEN_DURATION=24h

# Bounds, in seconds (STOP_TIMEOUT is read by hack/lib/processes.sh). The manager's own graceful
# shutdown stops its controllers and releases the Lease in well under STOP_TIMEOUT.
STOP_TIMEOUT=15
READY_TIMEOUT=60

LOG_PREFIX=operator
# shellcheck source=SCRIPTDIR/lib/processes.sh
source "$REPO_ROOT/hack/lib/processes.sh"

NAME=manager

kubeconfig_path() { printf '%s/kubeconfig' "$STATE_DIR"; }
probe_address_path() { printf '%s/probe-address' "$STATE_DIR"; }

require_tools() {
	: "${KUBECTL:?the path of kubectl: run this through make (make demo)}"
	: "${KUSTOMIZE:?the path of kustomize: run this through make (make demo)}"
	[[ -x $KUBECTL ]] || die "kubectl not found or not executable: $KUBECTL"
	[[ -x $KUSTOMIZE ]] || die "kustomize not found or not executable: $KUSTOMIZE"
	[[ -f $CLUSTER_KUBECONFIG ]] ||
		die "no cluster kubeconfig at $CLUSTER_KUBECONFIG (start the cluster: make cluster-up)"
}

# ---------------------------------------------------------------------------------------------
# prepare

# prepare: hack/prepare-operator (support.LocalOperator.Prepare, which the Go suites call too)
# applies config/local, waits for the CRDs and writes the kubeconfig; its token is in a file of
# its own, which client-go reads again every minute, so that a later prepare hands a running
# manager a fresh token without a restart.
prepare() {
	require_tools
	(cd "$REPO_ROOT" && KUBECTL=$KUBECTL KUSTOMIZE=$KUSTOMIZE go run ./hack/prepare-operator \
		-repo "$REPO_ROOT" -admin-kubeconfig "$CLUSTER_KUBECONFIG" -kubeconfig "$(kubeconfig_path)" \
		-ttl "$TOKEN_DURATION") || die "preparing the operator's ServiceAccount kubeconfig failed"
}

# ---------------------------------------------------------------------------------------------
# start

manager_ready() { curl -sf --max-time 2 "http://$(<"$(probe_address_path)")/readyz" >/dev/null; }

# warn_if_stale PID: a manager started before MANAGER was rebuilt keeps running the old build.
warn_if_stale() {
	local exe want
	exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 0
	want=$(readlink -f "$MANAGER")
	if [[ $exe == "$want (deleted)" ]]; then
		log "warning: the running manager (pid $1) is an older build of $want; stop and start it to run the new one"
	elif [[ $exe != "$want" ]]; then
		log "warning: the running manager (pid $1) runs $exe, not $want"
	fi
}

start_manager() {
	local port extra=()
	read -ra extra <<<"${OAAT_OPERATOR_ARGS:-}"
	# shellcheck disable=SC2119 # no port to avoid besides those in use
	port=$(pick_free_port)
	printf '127.0.0.1:%s\n' "$port" >"$(probe_address_path)"
	start_process "$NAME" "$MANAGER" \
		--kubeconfig "$(kubeconfig_path)" \
		--leader-elect \
		--leader-election-namespace "$NAMESPACE" \
		--metrics-bind-address 0 \
		--health-probe-bind-address "127.0.0.1:$port" \
		"${extra[@]}"
}

# ---------------------------------------------------------------------------------------------
# Subcommands

setup_state_dir() {
	resolve_state_dir
	mkdir -p "$STATE_DIR/pids" "$STATE_DIR/logs"
	lock_state_dir
}

cmd_prepare() {
	setup_state_dir
	prepare
	kubeconfig_path
	echo
}

cmd_start() {
	local pid started=$SECONDS
	: "${MANAGER:?the path of the manager binary: run this through make (make demo)}"
	[[ -x $MANAGER ]] || die "manager binary not found or not executable: $MANAGER"
	setup_state_dir
	prepare
	if pid=$(component_pid "$NAME"); then
		log "manager already running (pid $pid)"
		warn_if_stale "$pid"
	else
		start_manager
	fi
	wait_until "$NAME" "$READY_TIMEOUT" manager_ready
	log "manager ready at http://$(<"$(probe_address_path)")/readyz (start took $((SECONDS - started))s)"
	log_file "$NAME"
	echo
}

cmd_stop() {
	local purge=false
	case ${1:-} in
	"") ;;
	--purge) purge=true ;;
	*) die "usage: $0 stop [--purge]" ;;
	esac
	if [[ -d $STATE_DIR ]]; then
		setup_state_dir
		stop_process "$NAME"
	fi
	if $purge; then
		rm -rf "$STATE_DIR"
		log "removed $STATE_DIR"
	fi
}

cmd_status() {
	local pid
	[[ -d $STATE_DIR ]] && resolve_state_dir
	if pid=$(component_pid "$NAME"); then
		printf '%-24s pid %-8s running\n' "$NAME" "$pid"
		printf 'log: %s\nkubeconfig: %s\n' "$(log_file "$NAME")" "$(kubeconfig_path)"
		return 0
	fi
	printf '%-24s pid %-8s stopped\n' "$NAME" "-"
	return 1
}

main() {
	local cmd=${1:-}
	shift || true
	case $cmd in
	prepare) cmd_prepare "$@" ;;
	start) cmd_start "$@" ;;
	stop) cmd_stop "$@" ;;
	status) cmd_status "$@" ;;
	*)
		echo "usage: $0 prepare | start | stop [--purge] | status" >&2
		exit 2
		;;
	esac
}

main "$@"
