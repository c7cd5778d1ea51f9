#!/usr/bin/env bash
# Smoke test of the local cluster's real node (cluster.sh with OAAT_CLUSTER_REAL_NODE=1): brings
# the cluster up with it, runs a busybox pod there (pulled through the node's registry by its
# public name), reads its exit code and its log through the API server, then brings the cluster
# down and checks that nothing of the real node is left on the machine: no process, no mount, no
# network device, no iptables rule, no network namespace. Before that down, every process of the
# cluster is killed and another cluster takes the machine over (check_takeover). Prints PASS/FAIL
# lines; exits 1 on a failure.
#
# State in <repo>/.state/realnode-smoke (or OAAT_CLUSTER_DIR), purged at the end.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
CLUSTER=$SCRIPT_DIR/cluster.sh
export OAAT_CLUSTER_DIR=${OAAT_CLUSTER_DIR:-$REPO_ROOT/.state/realnode-smoke}
# The cluster that takes the machine over from the killed one (check_takeover).
TAKEOVER_DIR=$OAAT_CLUSTER_DIR-takeover
export OAAT_CLUSTER_REAL_NODE=1
: "${KUBECTL:?the path of kubectl: run this through make (make real-node-smoke)}"

# From realnode.sh.
REAL_NODE_NAME=real-node
REAL_NODE_BRIDGE=oaatbr0
REAL_NODE_CHAIN=OAAT-REAL-NODE
CNI_NETWORK_NAME=oaat-real-node

POD=smoke-busybox
FAILED=0
pass() { echo "PASS: $*"; }
fail() {
	echo "FAIL: $*"
	FAILED=1
}

k() { "$KUBECTL" --kubeconfig="$KUBECONFIG_PATH" --namespace=default "$@"; }

cleanup() {
	local rc=$?
	OAAT_CLUSTER_DIR=$TAKEOVER_DIR "$CLUSTER" down --purge >/dev/null 2>&1 || true
	if [[ ${CLUSTER_STOPPED:-false} != true ]]; then "$CLUSTER" down >/dev/null 2>&1 || true; fi
	exit "$rc"
}
trap cleanup EXIT

# machine_state: what of ours could be left on the machine, one line each.
machine_state() {
	local pid
	for pid in /proc/[0-9]*; do
		{ tr '\0' ' ' <"$pid/cmdline" | grep -qF -- "$OAAT_CLUSTER_DIR/" &&
			echo "process ${pid#/proc/}: $(tr '\0' ' ' <"$pid/cmdline" | cut -c1-120)"; } 2>/dev/null || true
	done
	findmnt -rn -o TARGET | awk -v dir="$OAAT_CLUSTER_DIR/" 'index($0, dir) == 1 { print "mount " $0 }'
	findmnt -rn -o TARGET,FSTYPE | awk '$2 == "nsfs" && $1 ~ /^\/(var\/)?run\/netns\/cni-/ { print "netns mount " $1 }'
	ip -o link show | awk -F': ' -v br="$REAL_NODE_BRIDGE" '$2 == br || $0 ~ ("master " br " ") { print "link " $2 }'
	# Ours, and the kubelet's (KUBE-*: it must not make any, see makeIPTablesUtilChains).
	{ iptables-save; ip6tables-save; } 2>/dev/null | grep -E -- "$REAL_NODE_CHAIN|\"$CNI_NETWORK_NAME\"|KUBE-" | sed 's/^/iptables /' || true
	find /sys/fs/cgroup -maxdepth 2 -name kubepods -type d | sed 's/^/cgroup /' 
	[[ -f /run/lock/oaat-real-node.owner ]] && echo "machine lock held by $(cat /run/lock/oaat-real-node.owner)"
	return 0
}

check_up() {
	local start=$SECONDS
	KUBECONFIG_PATH=$("$CLUSTER" up | tail -n 1)
	if [[ -f $KUBECONFIG_PATH ]]; then pass "up with a real node in $((SECONDS - start))s"; else
		fail "up printed no kubeconfig"
		exit 1
	fi
	if [[ $(k get node "$REAL_NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]]; then
		pass "node $REAL_NODE_NAME Ready, address $(k get node "$REAL_NODE_NAME" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')"
	else
		fail "node $REAL_NODE_NAME not Ready"
	fi
	local taints
	taints=$(k get node "$REAL_NODE_NAME" -o jsonpath='{.spec.taints}')
	[[ -z $taints ]] && pass "the real node has no taint" || fail "the real node has taints: $taints"
	taints=$(k get node kwok-node-1 -o jsonpath='{.spec.taints[*].key}')
	[[ $taints == *kwok.x-k8s.io/node* ]] && pass "kwok's nodes are tainted" || fail "kwok-node-1 taints: $taints"
}

check_real_pod() {
	k delete pod "$POD" --ignore-not-found --wait >/dev/null
	k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $POD
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'echo "hello from \$(hostname)"; exit 3']
EOF
	local deadline=$((SECONDS + 120)) phase=
	while ((SECONDS < deadline)); do
		phase=$(k get pod "$POD" -o jsonpath='{.status.phase}')
		[[ $phase == Succeeded || $phase == Failed ]] && break
		sleep 1
	done
	local node exit_code container_id log
	node=$(k get pod "$POD" -o jsonpath='{.spec.nodeName}')
	exit_code=$(k get pod "$POD" -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')
	container_id=$(k get pod "$POD" -o jsonpath='{.status.containerStatuses[0].containerID}')
	if [[ $node == "$REAL_NODE_NAME" && $phase == Failed && $exit_code == 3 && $container_id == containerd://* ]]; then
		pass "a busybox pod ran on $node and ended $phase with its own exit code $exit_code ($container_id)"
	else
		fail "busybox pod: node '$node', phase '$phase', exit code '$exit_code', container '$container_id'"
		k describe pod "$POD" | tail -n 15 | sed 's/^/    /'
	fi
	log=$(k logs "$POD" 2>&1 || true)
	if [[ $log == "hello from $POD" ]]; then pass "kubectl logs: '$log'"; else fail "kubectl logs: '$log'"; fi
}

# check_running_pod: a pod still running at down, with an emptyDir and a token volume (mounts of
# the kubelet) beside its container's (containerd's rootfs and shm mounts).
check_running_pod() {
	k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: smoke-sleeper
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: busybox
    command: [sleep, "3600"]
    volumeMounts: [{name: scratch, mountPath: /scratch}]
  volumes: [{name: scratch, emptyDir: {}}]
EOF
	if k wait --for=condition=Ready pod/smoke-sleeper --timeout=60s >/dev/null; then
		pass "a pod is running at down, with $(findmnt -rn -o TARGET | grep -c "^$OAAT_CLUSTER_DIR/") mounts under the state dir"
	else
		fail "pod smoke-sleeper did not become Ready"
	fi
}

# check_takeover: the cluster's processes all killed at once, the pod's container too, as a killed
# job or a restarted machine leaves it (its sandbox's network namespace, mounts, cgroups, bridge,
# chains and the machine lock left): the up of another cluster takes the machine over, and its
# down leaves the machine to check_down.
check_takeover() {
	local pid pids=() out
	for pid in /proc/[0-9]*; do
		{ tr '\0' ' ' <"$pid/cmdline" | grep -qF -- "$OAAT_CLUSTER_DIR/" && pids+=("${pid#/proc/}"); } 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		pkill -KILL -P "$pid" || true
		kill -KILL "$pid" 2>/dev/null || true
	done
	if out=$(OAAT_CLUSTER_DIR=$TAKEOVER_DIR "$CLUSTER" up 2>&1) && [[ $out == *"is gone"* ]]; then
		pass "with the ${#pids[@]} processes of this cluster killed, another cluster's up took the machine over"
	else
		fail "another cluster's up after this one's processes were killed:"
		printf '%s\n' "$out" | tail -n 5 | sed 's/^/    /'
	fi
	OAAT_CLUSTER_DIR=$TAKEOVER_DIR "$CLUSTER" down --purge >/dev/null || fail "the down of the cluster that took over"
}

check_down() {
	local left start=$SECONDS
	if "$CLUSTER" down; then
		CLUSTER_STOPPED=true
		pass "down in $((SECONDS - start))s"
	else
		fail "down"
	fi
	left=$(machine_state)
	if [[ -z $left ]]; then
		pass "nothing of the real node is left: no process, mount, network device, iptables rule, network namespace or lock"
	else
		fail "left behind after down:"
		printf '%s\n' "$left" | sed 's/^/    /'
	fi
	"$CLUSTER" down --purge >/dev/null 2>&1 || true
}

main() {
	local before
	before=$(machine_state)
	[[ -z $before ]] || {
		fail "the machine already has real-node leftovers before the test:"
		printf '%s\n' "$before" | sed 's/^/    /'
		exit 1
	}
	check_up
	check_real_pod
	check_running_pod
	check_takeover
	check_down
	if ((FAILED)); then
		echo "REAL NODE SMOKE: FAIL"
		exit 1
	fi
	echo "REAL NODE SMOKE: PASS"
}

main "$@"
