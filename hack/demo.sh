#!/usr/bin/env bash
# make demo: the local cluster (hack/cluster/cluster.sh) with its real node, the operator running
# on this machine as its ServiceAccount (hack/local-operator), the samples of config/samples in
# namespace oaat-demo, and `kubectl oaat status -w` on them until Ctrl-C. Each item's pod really
# runs on the real node: busybox prints its item, sleeps and exits 0 or 1 as the sample's script
# chooses; `kubectl logs` shows what it printed. Ctrl-C leaves the cluster and the operator running.
#
# Usage: demo.sh [up] | down [--purge]
#
# Environment:
#   KUBE_APISERVER, KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, KUBECTL, ETCD, KWOK,
#   KUBELET, CRI_TEARDOWN, OAAT_PAUSE_IMAGE, IMAGES_DIR                            (cluster.sh)
#   LOCAL_OPERATOR   hack/local-operator, built; with KUSTOMIZE and MANAGER for it
#   KUBECTL_OAAT   the kubectl-oaat plugin binary
#   DEMO_SECONDS   when set (CI, scripts): show the status every few seconds for that many
#                  seconds instead of watching, then check that the group ran items one at a time
#                  and exit non-zero if not
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
CLUSTER=$SCRIPT_DIR/cluster/cluster.sh

NAMESPACE=oaat-demo
# The OaatGroup of config/samples, and the label the operator puts on its pods.
GROUP=testsimple
GROUP_LABEL=oaat.io/group
# DEMO_SECONDS mode: seconds between two status tables, and the items that must have run.
SHOW_EVERY=5
MIN_ITEMS_RUN=2

say() { printf 'demo: %s\n' "$*"; }
die() {
	printf 'demo: error: %s\n' "$*" >&2
	exit 1
}

now_ms() { date +%s%3N; }

# step TITLE COMMAND...: runs COMMAND, then says how long it took.
step() {
	local title=$1 start
	shift
	start=$(now_ms)
	"$@"
	say "$title: $(elapsed_since "$start")"
}

elapsed_since() {
	local ms=$(($(now_ms) - $1))
	printf '%d.%01ds' $((ms / 1000)) $((ms % 1000 / 100))
}

kubectl_admin() { "$KUBECTL" --kubeconfig="$CLUSTER_KUBECONFIG" "$@"; }

operator() {
	: "${LOCAL_OPERATOR:?the path of hack/local-operator, built: run this through make (make demo)}"
	"$LOCAL_OPERATOR" -repo "$REPO_ROOT" "$@"
}

# ---------------------------------------------------------------------------------------------
# up

cluster_up() {
	CLUSTER_KUBECONFIG=$(OAAT_CLUSTER_REAL_NODE=1 "$CLUSTER" up | tail -n 1)
	[[ -f $CLUSTER_KUBECONFIG ]] || die "cluster.sh up printed no kubeconfig path"
	export CLUSTER_KUBECONFIG
}

operator_start() {
	OPERATOR_LOG=$(operator start | tail -n 1)
}

# require_sample_images: dies unless make images built every image the samples' pods name (as
# containerd resolves a short name: docker.io/library/NAME:latest); the node pulls nothing from the
# internet, and a missing image would only show as an item pod in ErrImagePull.
require_sample_images() {
	local image built
	built=$(IMAGES_DIR=${IMAGES_DIR:-$REPO_ROOT/bin/images} "$REPO_ROOT/hack/images/list.sh") || die "no images built: make demo builds them"
	for image in $("$KUSTOMIZE" build "$REPO_ROOT/config/samples" | sed -n 's/^ *image: *//p' | tr -d "\"'" | sort -u); do
		[[ $image == */* ]] || image=docker.io/library/$image
		[[ ${image##*/} == *:* ]] || image=$image:latest
		grep -qxF "$image" <<<"$built" || die "the samples' image $image was not built: make demo builds it (DEMO_IMAGES)"
	done
}

# apply_samples: the samples, in NAMESPACE, which enforces the restricted Pod Security Standard:
# the samples' item pods meet it.
apply_samples() {
	if ! kubectl_admin get namespace "$NAMESPACE" >/dev/null 2>&1; then
		kubectl_admin create namespace "$NAMESPACE" >/dev/null
	fi
	kubectl_admin label --overwrite namespace "$NAMESPACE" pod-security.kubernetes.io/enforce=restricted \
		pod-security.kubernetes.io/warn=restricted >/dev/null
	"$KUSTOMIZE" build "$REPO_ROOT/config/samples" |
		kubectl_admin apply --namespace="$NAMESPACE" --server-side -f - | sed 's/^/  /'
}

show_status() { "$KUBECTL_OAAT" status --namespace="$NAMESPACE" --kubeconfig="$CLUSTER_KUBECONFIG" "$@"; }

watch_status() {
	trap 'echo; say "stopped watching; the cluster and the operator keep running (make demo-down stops them)"; exit 0' INT
	show_status -w
}

# group_pods: one line per pod of the group: name phase created finished, with "-" for a phase
# not yet set and for a container that has not ended.
group_pods() {
	kubectl_admin get pods --namespace="$NAMESPACE" --selector="$GROUP_LABEL=$GROUP" \
		-o jsonpath='{range .items[*]}{.metadata.name}{"|"}{.status.phase}{"|"}{.metadata.creationTimestamp}{"|"}{.status.containerStatuses[0].state.terminated.finishedAt}{"\n"}{end}' |
		awk -F'|' 'NF { print $1, ($2 == "" ? "-" : $2), $3, ($4 == "" ? "-" : $4) }'
}

# live_pods: the names of the group's pods that have not ended (Pending, Running, Unknown).
live_pods() { group_pods | awk '$2 != "Succeeded" && $2 != "Failed" { print $1 }'; }

# overlapping_pods SINCE: pairs of the group's pods created at or after SINCE (still present) whose
# lives overlapped, from creation to the end of their container, or to now if it has not ended.
# Timestamps are whole seconds, so an overlap within the same second goes unseen, but none is
# reported falsely. Pods of an earlier demo (make demo again without PURGE=1) are left out: the
# node's restart ended them without a finishedAt.
overlapping_pods() {
	group_pods | awk -v since="$1" '$3 >= since' |
		awk '{ print $3, ((($2 == "Succeeded" || $2 == "Failed") && $4 != "-" && $4 != "null") ? $4 : "9999"), $1 }' |
		sort | awk '
			NR > 1 && $1 < end { print "  " holder " (until " end ") and " $3 " (from " $1 ")" }
			NR == 1 || $2 > end { end = $2; holder = $3 }'
}

# items_run_since TIME: the group's items whose lastSuccess or lastFailure is at or after TIME
# (RFC 3339, UTC, whole seconds: such strings sort as times do).
items_run_since() {
	kubectl_admin get oaatgroup "$GROUP" --namespace="$NAMESPACE" \
		-o jsonpath='{range .status.items[*]}{.name}{"|"}{.lastSuccess}{"|"}{.lastFailure}{"\n"}{end}' |
		awk -F'|' -v since="$1" 'NF && ($2 >= since || $3 >= since) { print $1 }'
}

# observe SECONDS: shows the status every SHOW_EVERY seconds and counts the group's live pods
# every second; sets MAX_LIVE and MAX_LIVE_PODS to the largest count seen and its pods.
observe() {
	local start=$SECONDS end=$((SECONDS + $1)) next_show=$SECONDS live count
	MAX_LIVE=0 MAX_LIVE_PODS=
	while ((SECONDS < end)); do
		live=$(live_pods)
		count=$(grep -c . <<<"$live" || true)
		if ((count > MAX_LIVE)); then
			MAX_LIVE=$count
			MAX_LIVE_PODS=$(tr '\n' ' ' <<<"$live")
		fi
		if ((SECONDS >= next_show)); then
			printf '\n--- %s (+%ds)\n' "$(date +%T)" $((SECONDS - start))
			show_status
			next_show=$((SECONDS + SHOW_EVERY))
		fi
		sleep 1
	done
}

# logs_command: how to read what the group's item pods printed.
logs_command() {
	printf '%s logs --kubeconfig=%s --namespace=%s --selector=%s=%s --prefix' \
		"$KUBECTL" "$CLUSTER_KUBECONFIG" "$NAMESPACE" "$GROUP_LABEL" "$GROUP"
}

# check_item_logs: the log of the newest ended item pod, read through the API server from the
# kubelet, holds the line the sample prints with its item. The newest: a pod of an earlier demo
# (make demo again without PURGE=1) has lost its container, and its log, when the node stopped.
check_item_logs() {
	local pod item log
	pod=$(group_pods | awk '$2 == "Succeeded" || $2 == "Failed"' | sort -k3,3r | awk '{ print $1; exit }')
	if [[ -z $pod ]]; then
		say "FAIL: no item pod of $GROUP has ended yet: no log to read"
		return 1
	fi
	item=$(kubectl_admin get pod "$pod" --namespace="$NAMESPACE" -o jsonpath='{.metadata.annotations.oaat\.io/item}')
	log=$(kubectl_admin logs "$pod" --namespace="$NAMESPACE" 2>&1 || true)
	if [[ -n $item && $log == *"$item"* ]]; then
		say "ok: kubectl logs $pod (item $item, $(kubectl_admin get pod "$pod" --namespace="$NAMESPACE" -o jsonpath='{.status.phase}, exit code {.status.containerStatuses[0].state.terminated.exitCode}, node {.spec.nodeName}')): $log"
	else
		say "FAIL: kubectl logs $pod (item '$item'): $log"
		return 1
	fi
}

# check_demo SINCE: did the group run items, one at a time, on the real node?
check_demo() {
	local since=$1 ran ran_count live live_count overlaps failed=0
	ran=$(items_run_since "$since")
	ran_count=$(grep -c . <<<"$ran" || true)
	live=$(live_pods)
	live_count=$(grep -c . <<<"$live" || true)
	overlaps=$(overlapping_pods "$since")
	if ((ran_count >= MIN_ITEMS_RUN)); then
		say "ok: $ran_count items ran since $since: $(tr '\n' ' ' <<<"$ran")"
	else
		say "FAIL: $ran_count items ran since $since (want at least $MIN_ITEMS_RUN): $(tr '\n' ' ' <<<"$ran")"
		failed=1
	fi
	if ((live_count <= 1 && MAX_LIVE <= 1)); then
		say "ok: at most one live pod of $GROUP at a time (now $live_count, at most $MAX_LIVE in the samples taken every second)"
	else
		say "FAIL: $live_count live pods of $GROUP now ($(tr '\n' ' ' <<<"$live")), up to $MAX_LIVE in the samples ($MAX_LIVE_PODS)"
		failed=1
	fi
	check_item_logs || failed=1
	if [[ -z $overlaps ]]; then
		say "ok: no two pods of $GROUP created since $since ($(group_pods | awk -v since="$since" '$3 >= since' | wc -l)) overlapped in time"
	else
		say "FAIL: pods of $GROUP overlapped in time:"
		printf '%s\n' "$overlaps"
		failed=1
	fi
	return "$failed"
}

cmd_up() {
	local since rc=0
	: "${KUBECTL:?the path of kubectl: run this through make (make demo)}"
	: "${KUSTOMIZE:?the path of kustomize: run this through make (make demo)}"
	: "${KUBECTL_OAAT:?the path of kubectl-oaat: run this through make (make demo)}"
	if [[ -n ${DEMO_SECONDS:-} && ! $DEMO_SECONDS =~ ^[0-9]+$ ]]; then
		die "DEMO_SECONDS must be a number of seconds, not '$DEMO_SECONDS'"
	fi
	require_sample_images
	since=$(date -u +%FT%TZ)
	step "cluster up" cluster_up
	step "operator started" operator_start
	step "samples applied in namespace $NAMESPACE" apply_samples
	echo
	echo "Look around: export KUBECONFIG=$CLUSTER_KUBECONFIG; $KUBECTL get oaat,pods -n $NAMESPACE (operator log: $OPERATOR_LOG)"
	echo "What the item pods printed (they run on the real node): $(logs_command)"
	echo "Ctrl-C stops watching; the cluster and the operator keep running until: make demo-down (PURGE=1 also deletes their state)"
	if [[ -z ${DEMO_SECONDS:-} ]]; then
		watch_status
		return
	fi
	step "watched for ${DEMO_SECONDS}s" observe "$DEMO_SECONDS"
	echo
	echo "Final status:"
	show_status
	check_demo "$since" || rc=$?
	say "the cluster and the operator keep running: make demo-down stops them"
	return "$rc"
}

# ---------------------------------------------------------------------------------------------
# down

cmd_down() {
	local purge=()
	case ${1:-} in
	"") ;;
	--purge) purge=(--purge) ;;
	*) die "usage: $0 down [--purge]" ;;
	esac
	step "operator stopped" operator stop "${purge[@]}"
	step "cluster down" "$CLUSTER" down "${purge[@]}"
}

main() {
	local cmd=${1:-up}
	shift || true
	case $cmd in
	up) cmd_up "$@" ;;
	down) cmd_down "$@" ;;
	*)
		echo "usage: $0 [up] | down [--purge]" >&2
		exit 2
		;;
	esac
}

main "$@"
