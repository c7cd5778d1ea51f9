#!/usr/bin/env bash
# A throw-away local Kubernetes control plane for end-to-end tests of the operator: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler and kwok (fake Nodes that run fake
# pods), all on 127.0.0.1, all state under one directory.
#
# Usage: cluster.sh up | down [--purge] | status | kubeconfig
#
# Environment:
#   OAAT_CLUSTER_DIR     state directory (default <repo>/.state/cluster)
#   OAAT_CLUSTER_NODES   number of fake Nodes kwok-node-1..N (default 2)
#   OAAT_CLUSTER_REAL_NODE
#                        1: also a real node (kubelet, containerd, CNI) and a local registry that
#                        containerd pulls public image names through; see realnode.sh. Needs root;
#                        one per machine. Once up, down and status handle it without the variable.
#   KUBE_APISERVER, KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, KUBECTL, ETCD, KWOK
#                        binaries (default: the pinned ones under <repo>/bin)
#   KUBELET, CRI_TEARDOWN, KUBE_PROXY
#                        binaries of the real node (only with OAAT_CLUSTER_REAL_NODE=1); its
#                        Services and DNS (kube-proxy, CoreDNS) are services.sh's
#
# Pod behaviour on kwok's nodes (exit codes, durations) is set by the kwok Stages in stages/; see
# stages/pod-complete.yaml for the oaat.io/test-* annotations. kwok's nodes carry the label
# type=kwok and, in a cluster with a real node, the taint KWOK_TAINT: only pods that tolerate the
# taint (and select the label, to stay off the real node) run there; any other pod runs on the
# real node, as on a real cluster. In a cluster of kwok's nodes alone there is nowhere else for a
# pod to go: they are not tainted, so that a Deployment (OLM's, say) is scheduled as it is.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)

# The pinned binaries; the Makefile (make cluster-up) builds them and passes their paths, so that
# their versions are defined in one place (hack/tools/*/go.mod).
: "${KUBE_APISERVER:?the path of kube-apiserver: run this through make (make cluster-up)}"
: "${KUBE_CONTROLLER_MANAGER:?the path of kube-controller-manager: run this through make (make cluster-up)}"
: "${KUBE_SCHEDULER:?the path of kube-scheduler: run this through make (make cluster-up)}"
: "${KUBECTL:?the path of kubectl: run this through make (make cluster-up)}"
: "${ETCD:?the path of etcd: run this through make (make cluster-up)}"
: "${KWOK:?the path of kwok: run this through make (make cluster-up)}"

STATE_DIR=${OAAT_CLUSTER_DIR:-$REPO_ROOT/.state/cluster}
NODE_COUNT=${OAAT_CLUSTER_NODES:-2}
WANT_REAL_NODE=${OAAT_CLUSTER_REAL_NODE:-0}
[[ $WANT_REAL_NODE =~ ^[01]$ ]] || { echo "OAAT_CLUSTER_REAL_NODE must be 0 or 1" >&2; exit 2; }

# The annotation that marks kwok's own Nodes (kwok manages only those), and the taint and label
# they carry (tests/support/kwok.go has the same for the tests' pod templates).
KWOK_NODE_ANNOTATION=kwok.x-k8s.io/node=fake
KWOK_TAINT=kwok.x-k8s.io/node=fake:NoSchedule

# Start order; stopping goes the other way, so etcd stops last: an apiserver whose etcd is gone
# can hang in graceful shutdown for minutes.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

# Bounds, in seconds (STOP_TIMEOUT is read by hack/lib/processes.sh).
STOP_TIMEOUT=10
READY_TIMEOUT=60

SERVICE_CIDR=10.0.0.0/24
# kwok's default pod CIDR is 10.0.0.0/24, the same as the service range: move pods elsewhere.
POD_CIDR=10.244.0.0/16

LOG_PREFIX=cluster
# log, die, the state dir, the lock, and starting and stopping processes (through hack/processes,
# which hack/local-operator's manager runs under too).
# shellcheck source=SCRIPTDIR/../lib/processes.sh
source "$REPO_ROOT/hack/lib/processes.sh"
# shellcheck source=SCRIPTDIR/realnode.sh
source "$SCRIPT_DIR/realnode.sh"
# shellcheck source=SCRIPTDIR/services.sh
source "$SCRIPT_DIR/services.sh"

# ---------------------------------------------------------------------------------------------
# State layout

kubeconfig_path() { printf '%s/kubeconfig' "$STATE_DIR"; }

# ---------------------------------------------------------------------------------------------
# Ports: chosen once, at the first up, and kept in <state>/ports so that the kubeconfig and the
# etcd member's peer URL stay valid across down/up.

PORT_NAMES=(ETCD_CLIENT_PORT ETCD_PEER_PORT APISERVER_PORT KWOK_PORT REGISTRY_PORT KUBELET_PORT KUBELET_HEALTHZ_PORT)

load_or_pick_ports() {
	local file=$STATE_DIR/ports key value chosen=()
	if [[ -f $file ]]; then
		while IFS='=' read -r key value; do
			[[ " ${PORT_NAMES[*]} " == *" $key "* && $value =~ ^[0-9]+$ ]] || continue
			printf -v "$key" '%s' "$value"
		done <"$file"
	fi
	for key in "${PORT_NAMES[@]}"; do
		if [[ -z ${!key:-} ]]; then
			printf -v "$key" '%s' "$(pick_free_port "${chosen[@]}")"
		fi
		chosen+=("${!key}")
	done
	for key in "${PORT_NAMES[@]}"; do printf '%s=%s\n' "$key" "${!key}"; done >"$file.tmp"
	mv "$file.tmp" "$file"
}

# require_port_free NAME PORT...: a recorded port that someone else took since the last up.
require_ports_free() {
	local name=$1 port
	shift
	for port in "$@"; do
		if port_in_use "$port"; then
			die "port $port for $name is taken by another process; 'down --purge' picks new ports"
		fi
	done
}

# ---------------------------------------------------------------------------------------------
# Credentials, made once per state dir.

# A CA of our own rather than the apiserver's self-signed certificate: clients can then verify
# the server (no insecure-skip-tls-verify), and the controller-manager gets a real root CA for
# the kube-root-ca.crt ConfigMap and for signing CSRs.
ensure_pki() {
	local pki=$STATE_DIR/pki
	mkdir -p "$pki"
	if [[ ! -f $pki/ca.crt ]]; then
		openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=oaat-local-ca" \
			-keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
	fi
	if [[ ! -f $pki/apiserver.crt ]]; then
		# 10.0.0.1 is the kubernetes Service's address in SERVICE_CIDR.
		printf '%s\n' \
			'basicConstraints=CA:FALSE' \
			'keyUsage=digitalSignature,keyEncipherment' \
			'extendedKeyUsage=serverAuth' \
			'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local' \
			>"$pki/apiserver.ext"
		openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
			-keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" 2>/dev/null
		openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
			-CAcreateserial -days 3650 -extfile "$pki/apiserver.ext" -out "$pki/apiserver.crt" 2>/dev/null
	fi
	# The API server's identity towards kubelets (logs, exec): RBAC grants it system:kubelet-api-admin
	# when a real node is up.
	sign_cert apiserver-kubelet-client "/CN=kube-apiserver-kubelet-client" 'extendedKeyUsage=clientAuth'
	if [[ ! -f $pki/sa.key ]]; then
		openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
		openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
	fi
	chmod 600 "$pki"/*.key
}

# The admin identity: a static token in system:masters, so RBAC lets it do everything.
ensure_admin_token() {
	local file=$STATE_DIR/tokens.csv
	if [[ ! -f $file ]]; then
		(umask 077 && printf '%s,admin,admin,system:masters\n' "$(openssl rand -hex 32)" >"$file")
	fi
	ADMIN_TOKEN=$(cut -d, -f1 "$file")
}

# write_kubeconfig_file FILE USER USER-FIELDS...: a kubeconfig of the local cluster (checked
# against its CA) for USER, whose user entry has the fields given as "key: value" arguments.
write_kubeconfig_file() {
	local file=$1 user=$2 ca_data field
	shift 2
	ca_data=$(base64 -w0 <"$STATE_DIR/pki/ca.crt")
	(
		umask 077
		{
			printf '%s\n' 'apiVersion: v1' 'kind: Config' 'clusters:' '- name: oaat-local' '  cluster:' \
				"    server: https://127.0.0.1:${APISERVER_PORT}" "    certificate-authority-data: ${ca_data}" \
				'users:' "- name: $user" '  user:'
			for field in "$@"; do printf '    %s\n' "$field"; done
			printf '%s\n' 'contexts:' '- name: oaat-local' '  context:' '    cluster: oaat-local' \
				"    user: $user" '    namespace: default' 'current-context: oaat-local'
		} >"$file.tmp"
	)
	mv "$file.tmp" "$file"
}

write_kubeconfig() { write_kubeconfig_file "$(kubeconfig_path)" admin "token: ${ADMIN_TOKEN}"; }

# ---------------------------------------------------------------------------------------------
# Components. Each start_* is called only when the component is not running.

start_etcd() {
	require_ports_free etcd "$ETCD_CLIENT_PORT" "$ETCD_PEER_PORT"
	local peer=http://127.0.0.1:$ETCD_PEER_PORT client=http://127.0.0.1:$ETCD_CLIENT_PORT
	# --unsafe-no-fsync: the data is disposable, and fsync latency on a busy disk is what makes
	# a test cluster's writes slow.
	start_process etcd "$ETCD" \
		--name=oaat-local \
		--data-dir="$STATE_DIR/etcd" \
		--listen-client-urls="$client" --advertise-client-urls="$client" \
		--listen-peer-urls="$peer" --initial-advertise-peer-urls="$peer" \
		--initial-cluster="oaat-local=$peer" \
		--unsafe-no-fsync \
		--log-level=warn
}

start_kube_apiserver() {
	require_ports_free kube-apiserver "$APISERVER_PORT"
	local pki=$STATE_DIR/pki
	# Only the secure port exists in current releases. The API audience defaults to the issuer,
	# which is what the TokenRequest API (kubectl create token) needs. No endpoint reconciler:
	# Endpoints may not hold a loopback address, so it would fail every 10 s, and no pod here
	# reaches the API through the kubernetes Service anyway.
	start_process kube-apiserver "$KUBE_APISERVER" \
		--etcd-servers="http://127.0.0.1:$ETCD_CLIENT_PORT" \
		--bind-address=127.0.0.1 \
		--advertise-address=127.0.0.1 \
		--endpoint-reconciler-type=none \
		--secure-port="$APISERVER_PORT" \
		--cert-dir="$pki" \
		--tls-cert-file="$pki/apiserver.crt" \
		--tls-private-key-file="$pki/apiserver.key" \
		--client-ca-file="$pki/ca.crt" \
		--token-auth-file="$STATE_DIR/tokens.csv" \
		--authorization-mode=Node,RBAC \
		--enable-admission-plugins=NodeRestriction \
		--kubelet-preferred-address-types=InternalIP \
		--kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$pki/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="$pki/ca.crt" \
		--service-cluster-ip-range="$SERVICE_CIDR" \
		--service-account-issuer=https://localhost \
		--service-account-key-file="$pki/sa.pub" \
		--service-account-signing-key-file="$pki/sa.key"
}

start_kube_controller_manager() {
	local pki=$STATE_DIR/pki
	# No node IPAM (kwok assigns pod IPs) and no node lifecycle (it would taint and evict fake
	# nodes whose kubelet never answers). --secure-port=0: nothing scrapes it, and a fixed
	# default port would clash with a second cluster on the same machine.
	start_process kube-controller-manager "$KUBE_CONTROLLER_MANAGER" \
		--kubeconfig="$(kubeconfig_path)" \
		--controllers='*,-nodeipam,-nodelifecycle' \
		--service-account-private-key-file="$pki/sa.key" \
		--root-ca-file="$pki/ca.crt" \
		--cluster-signing-cert-file="$pki/ca.crt" \
		--cluster-signing-key-file="$pki/ca.key" \
		--use-service-account-credentials=true \
		--leader-elect=false \
		--secure-port=0
}

start_kube_scheduler() {
	start_process kube-scheduler "$KUBE_SCHEDULER" \
		--kubeconfig="$(kubeconfig_path)" \
		--leader-elect=false \
		--secure-port=0
}

start_kwok() {
	require_ports_free kwok "$KWOK_PORT"
	local stage config_args=()
	for stage in "$SCRIPT_DIR"/stages/*.yaml; do config_args+=("--config=$stage"); done
	start_process kwok "$KWOK" \
		--kubeconfig="$(kubeconfig_path)" \
		--manage-all-nodes=false \
		--manage-nodes-with-annotation-selector="$KWOK_NODE_ANNOTATION" \
		--server-address="127.0.0.1:$KWOK_PORT" \
		--cidr="$POD_CIDR" \
		"${config_args[@]}"
}

# ---------------------------------------------------------------------------------------------
# Health

etcd_healthy() { curl -sf --max-time 2 "http://127.0.0.1:$ETCD_CLIENT_PORT/health" >/dev/null; }

apiserver_ready() {
	curl -sf --max-time 3 --cacert "$STATE_DIR/pki/ca.crt" \
		-H "Authorization: Bearer $ADMIN_TOKEN" \
		"https://127.0.0.1:$APISERVER_PORT/readyz" >/dev/null
}

# components: what this cluster runs, in start order.
components() {
	printf '%s\n' "${COMPONENTS[@]}"
	if [[ $WANT_REAL_NODE == 1 ]] || has_real_node; then printf '%s\n' "${REAL_NODE_COMPONENTS[@]}"; fi
}

all_running() {
	local name
	for name in $(components); do is_running "$name" || return 1; done
}

kubectl_admin() { "$KUBECTL" --kubeconfig="$(kubeconfig_path)" "$@"; }

# ---------------------------------------------------------------------------------------------
# Nodes

node_manifest() {
	cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations:
    ${KWOK_NODE_ANNOTATION%%=*}: ${KWOK_NODE_ANNOTATION#*=}
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    type: kwok
    kubernetes.io/hostname: $1
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
spec: {}
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
EOF
}

# untaint_not_ready NODE: admission adds this taint to every new Node, and only the node lifecycle
# controller (disabled) would remove it: without this no pod would be scheduled.
untaint_not_ready() {
	if kubectl_admin get node "$1" -o jsonpath='{.spec.taints[*].key}' |
		grep -qw node.kubernetes.io/not-ready; then
		kubectl_admin taint node "$1" node.kubernetes.io/not-ready- >/dev/null
	fi
}

ensure_nodes() {
	local i name
	for ((i = 1; i <= NODE_COUNT; i++)); do
		name=kwok-node-$i
		if ! kubectl_admin get node "$name" >/dev/null 2>&1; then
			node_manifest "$name" | kubectl_admin create -f - >/dev/null
		fi
		untaint_not_ready "$name"
		# The taint keeps ordinary pods off kwok's nodes only where a real node takes them (a
		# kept state dir may have had the other kind of cluster).
		if [[ $WANT_REAL_NODE == 1 ]] || has_real_node; then
			kubectl_admin taint node "$name" "$KWOK_TAINT" --overwrite >/dev/null
		elif kubectl_admin get node "$name" -o jsonpath='{.spec.taints[*].key}' | grep -qw "${KWOK_TAINT%%=*}"; then
			kubectl_admin taint node "$name" "${KWOK_TAINT%%=*}-" >/dev/null
		fi
	done
	for ((i = 1; i <= NODE_COUNT; i++)); do
		kubectl_admin wait --for=condition=Ready "node/kwok-node-$i" --timeout=30s >/dev/null ||
			fail_start kwok "node kwok-node-$i did not become Ready"
	done
}

# ---------------------------------------------------------------------------------------------
# Subcommands

check_binaries() {
	local bin
	for bin in "$ETCD" "$KUBE_APISERVER" "$KUBE_CONTROLLER_MANAGER" "$KUBE_SCHEDULER" "$KWOK" "$KUBECTL"; do
		[[ -x $bin ]] || die "binary not found or not executable: $bin"
	done
}

cmd_up() {
	resolve_state_dir
	lock_state_dir
	mkdir -p "$STATE_DIR/pids" "$STATE_DIR/logs"
	load_or_pick_ports
	ensure_admin_token
	if all_running && apiserver_ready && [[ -f $(kubeconfig_path) ]]; then
		kubeconfig_path
		echo
		return 0
	fi
	check_binaries
	if [[ $WANT_REAL_NODE == 1 ]] || has_real_node; then
		require_real_node_binaries
		# Before anything starts: one real node per machine.
		claim_machine
		mkdir -p "$(real_node_dir)"
	fi
	ensure_pki

	is_running etcd || start_etcd
	wait_until etcd 20 etcd_healthy

	is_running kube-apiserver || start_kube_apiserver
	wait_until kube-apiserver "$READY_TIMEOUT" apiserver_ready
	write_kubeconfig

	is_running kube-controller-manager || start_kube_controller_manager
	is_running kube-scheduler || start_kube_scheduler
	is_running kwok || start_kwok

	ensure_nodes
	if has_real_node; then up_real_node && up_services; fi
	# Pods cannot be created in a namespace before its default ServiceAccount exists (the
	# ServiceAccount admission plugin rejects them); the controller-manager makes it.
	wait_until kube-controller-manager 30 kubectl_admin get serviceaccount default --namespace=default
	all_running || die "a component exited during start-up; see $STATE_DIR/logs"
	kubeconfig_path
	echo
}

cmd_down() {
	local purge=false name i
	case ${1:-} in
	"") ;;
	--purge) purge=true ;;
	*) die "usage: $0 down [--purge]" ;;
	esac
	if [[ -d $STATE_DIR ]]; then
		resolve_state_dir
		lock_state_dir
		if has_real_node; then down_services && down_real_node; fi
		for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
			stop_process "${COMPONENTS[i]}"
		done
	fi
	if $purge; then
		rm -rf "$STATE_DIR"
		log "removed $STATE_DIR"
	fi
}

cmd_status() {
	local name pid rc=0
	[[ -d $STATE_DIR ]] && resolve_state_dir
	for name in $(components); do
		if pid=$(component_pid "$name"); then
			printf '%-24s pid %-8s running\n' "$name" "$pid"
		else
			printf '%-24s pid %-8s stopped\n' "$name" "-"
			rc=1
		fi
	done
	printf 'kubeconfig: %s\n' "$(kubeconfig_path)"
	if has_real_node; then
		load_or_pick_ports
		printf 'registry: %s (plain HTTP; every image of make images under its public name)\n' "$(registry_address)"
	fi
	return "$rc"
}

cmd_kubeconfig() {
	[[ -d $STATE_DIR ]] && resolve_state_dir
	kubeconfig_path
	echo
}

main() {
	local cmd=${1:-}
	shift || true
	case $cmd in
	up) cmd_up "$@" ;;
	down) cmd_down "$@" ;;
	status) cmd_status "$@" ;;
	kubeconfig) cmd_kubeconfig "$@" ;;
	*)
		echo "usage: $0 up | down [--purge] | status | kubeconfig" >&2
		exit 2
		;;
	esac
}

main "$@"
