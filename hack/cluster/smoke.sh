#!/usr/bin/env bash
# Smoke test of cluster.sh: brings the local cluster up, checks what the operator's end-to-end
# tests rely on (scripted pod outcomes, garbage collection, ServiceAccount tokens, RBAC), brings
# it down and checks that nothing is left running. Prints PASS/FAIL lines; exits 1 on a failure.
#
# It uses its own state directory (default <repo>/.state/cluster-smoke, or OAAT_CLUSTER_DIR) so
# that it never stops a cluster someone is working with. The state is kept between runs, so a
# second run also checks an up over existing data.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
CLUSTER=$SCRIPT_DIR/cluster.sh
export OAAT_CLUSTER_DIR=${OAAT_CLUSTER_DIR:-$REPO_ROOT/.state/cluster-smoke}
: "${KUBECTL:?the path of kubectl: run this through make (make cluster-smoke)}"

# Unique per run: the cluster's data outlives a run.
RUN_ID=$(date +%s)
NAMESPACE=default
FAILED=0

pass() { echo "PASS: $*"; }
fail() {
	echo "FAIL: $*"
	FAILED=1
}

k() { "$KUBECTL" --kubeconfig="$KUBECONFIG_PATH" --namespace="$NAMESPACE" "$@"; }

# Whatever happens, do not leave a control plane running behind a failed run.
cleanup() {
	local rc=$?
	if [[ ${CLUSTER_STOPPED:-false} != true ]]; then "$CLUSTER" down >/dev/null 2>&1 || true; fi
	exit "$rc"
}
trap cleanup EXIT

# pod_manifest NAME [DURATION EXIT_CODE [OWNER_CONFIGMAP OWNER_UID]]: a restartPolicy Never
# pod, scripted by annotations when DURATION and EXIT_CODE are given.
pod_manifest() {
	local name=$1 duration=${2:-} exit_code=${3:-} owner=${4:-} owner_uid=${5:-}
	cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $name
  labels:
    oaat-smoke: "$RUN_ID"
EOF
	if [[ -n $duration ]]; then
		cat <<EOF
  annotations:
    oaat.io/test-duration: "$duration"
    oaat.io/test-exit-code: "$exit_code"
EOF
	fi
	if [[ -n $owner ]]; then
		cat <<EOF
  ownerReferences:
  - {apiVersion: v1, kind: ConfigMap, name: $owner, uid: $owner_uid}
EOF
	fi
	cat <<EOF
spec:
  restartPolicy: Never
  # kwok's nodes only (cluster.sh taints and labels them).
  tolerations:
  - {key: kwok.x-k8s.io/node, operator: Equal, value: fake, effect: NoSchedule}
  nodeSelector:
    type: kwok
  containers:
  - name: main
    image: example.invalid/item:latest
EOF
}

# wait_terminal NAME: waits (30 s at most) for the pod to end, prints its phase.
wait_terminal() {
	local phase deadline=$((SECONDS + 30))
	while ((SECONDS < deadline)); do
		phase=$(k get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null || true)
		if [[ $phase == Succeeded || $phase == Failed ]]; then
			echo "$phase"
			return 0
		fi
		sleep 0.5
	done
	echo "${phase:-unknown}"
	return 1
}

terminated_field() { k get pod "$1" -o jsonpath="{.status.containerStatuses[0].state.terminated.$2}"; }

# seconds_running NAME: finishedAt - startedAt of the terminated container, in whole seconds.
seconds_running() {
	local started finished
	started=$(terminated_field "$1" startedAt)
	finished=$(terminated_field "$1" finishedAt)
	echo $(($(date -d "$finished" +%s) - $(date -d "$started" +%s)))
}

# check_outcome NAME WANT_PHASE WANT_EXIT WANT_REASON MIN_SECONDS
check_outcome() {
	local name=$1 phase code reason ran
	if ! phase=$(wait_terminal "$name"); then
		fail "$name did not end within 30s (phase $phase)"
		return
	fi
	code=$(terminated_field "$name" exitCode)
	reason=$(terminated_field "$name" reason)
	ran=$(seconds_running "$name")
	if [[ $phase == "$2" && $code == "$3" && $reason == "$4" ]] && ((ran >= $5 && ran <= $5 + 2)); then
		pass "$name ended $phase, exitCode $code, reason $reason, after ${ran}s Running"
	else
		fail "$name: got phase=$phase exitCode=$code reason=$reason ran=${ran}s; want $2/$3/$4 after ~$5s"
	fi
}

check_up() {
	local start elapsed second
	start=$SECONDS
	if KUBECONFIG_PATH=$("$CLUSTER" up | tail -n 1) && [[ -f $KUBECONFIG_PATH ]]; then
		pass "up in $((SECONDS - start))s, kubeconfig $KUBECONFIG_PATH"
	else
		fail "up"
		exit 1
	fi
	start=$(date +%s%N)
	second=$("$CLUSTER" up 2>&1 | tail -n 1)
	elapsed=$((($(date +%s%N) - start) / 1000000))
	if [[ $second == "$KUBECONFIG_PATH" ]] && ((elapsed < 5000)); then
		pass "second up is a no-op (${elapsed}ms)"
	else
		fail "second up: printed '$second' in ${elapsed}ms"
	fi
}

check_pod_outcomes() {
	local ok=smoke-ok-$RUN_ID bad=smoke-exit3-$RUN_ID random=smoke-random-$RUN_ID phase code
	{
		pod_manifest "$ok" 2s 0
		echo ---
		pod_manifest "$bad" 3s 3
		echo ---
		pod_manifest "$random"
	} | k create -f - >/dev/null
	check_outcome "$ok" Succeeded 0 Completed 2
	check_outcome "$bad" Failed 3 Error 3
	if phase=$(wait_terminal "$random"); then
		code=$(terminated_field "$random" exitCode)
		case $phase/$code in
		Succeeded/0 | Failed/1) pass "$random (no annotations) ended $phase, exitCode $code" ;;
		*) fail "$random: phase $phase with exitCode $code" ;;
		esac
	else
		fail "$random did not end within 30s (phase $phase)"
	fi
}

check_garbage_collection() {
	local owner=smoke-owner-$RUN_ID pod=smoke-owned-$RUN_ID uid deadline
	k create configmap "$owner" >/dev/null
	uid=$(k get configmap "$owner" -o jsonpath='{.metadata.uid}')
	# A long duration keeps the pod Running, as an item's pod would be when its owner goes.
	pod_manifest "$pod" 1h 0 "$owner" "$uid" | k create -f - >/dev/null
	k wait --for=jsonpath='{.status.phase}'=Running "pod/$pod" --timeout=30s >/dev/null ||
		fail "owned pod $pod never ran"
	k delete configmap "$owner" >/dev/null
	deadline=$((SECONDS + 30))
	while k get pod "$pod" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			fail "pod $pod still exists 30s after its owner ConfigMap was deleted"
			return
		fi
		sleep 0.5
	done
	pass "pod owned by a deleted ConfigMap was garbage-collected"
}

check_service_account_token() {
	local token who answer
	if ! token=$(k create token default --duration=10m); then
		fail "kubectl create token default"
		return
	fi
	who=$(k --token="$token" auth whoami -o jsonpath='{.status.userInfo.username}' 2>&1 || true)
	if [[ $who == system:serviceaccount:default:default ]]; then
		pass "ServiceAccount token authenticates as $who"
	else
		fail "ServiceAccount token: auth whoami says '$who'"
	fi
	answer=$(k --token="$token" auth can-i list pods 2>/dev/null || true)
	if [[ $answer == no ]]; then
		pass "plain ServiceAccount may not list pods (can-i: $answer)"
	else
		fail "plain ServiceAccount can-i list pods: '$answer', want 'no'"
	fi
}

check_pod_deletion() {
	if k delete pods -l "oaat-smoke=$RUN_ID" --timeout=30s >/dev/null &&
		[[ -z $(k get pods -l "oaat-smoke=$RUN_ID" -o name) ]]; then
		pass "smoke pods deleted"
	else
		fail "smoke pods still present after delete"
	fi
}

check_status_running() {
	local out
	if out=$("$CLUSTER" status); then
		pass "status exits 0 while up"
	else
		fail "status exits non-zero while up"
	fi
	printf '%s\n' "$out" | sed 's/^/    /'
}

check_down() {
	local pids=() file pid alive=() start
	for file in "$OAAT_CLUSTER_DIR"/pids/*.pid; do
		[[ -f $file ]] && pids+=("$(<"$file")")
	done
	start=$SECONDS
	if "$CLUSTER" down; then
		CLUSTER_STOPPED=true
		pass "down in $((SECONDS - start))s"
	else
		fail "down"
	fi
	for pid in "${pids[@]}"; do
		# ps shows zombies too; a zombie has exited, it only waits to be reaped.
		if ps -o stat= -p "$pid" | grep -qv '^Z'; then alive+=("$pid"); fi
	done
	if ((${#pids[@]} == 5 && ${#alive[@]} == 0)); then
		pass "none of the ${#pids[@]} started processes (${pids[*]}) is alive"
	else
		fail "recorded pids: ${pids[*]:-none}; still alive: ${alive[*]:-none}"
	fi
	if compgen -G "$OAAT_CLUSTER_DIR/pids/*.pid" >/dev/null; then
		fail "pid files left behind"
	else
		pass "pid files removed"
	fi
	if "$CLUSTER" status >/dev/null; then
		fail "status exits 0 after down"
	else
		pass "status exits 1 after down"
	fi
}

main() {
	check_up
	check_pod_outcomes
	check_garbage_collection
	check_service_account_token
	check_pod_deletion
	check_status_running
	check_down
	if ((FAILED)); then
		echo "SMOKE: FAIL"
		exit 1
	fi
	echo "SMOKE: PASS"
}

main "$@"
