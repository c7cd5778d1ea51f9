# shellcheck shell=bash
# The local cluster's optional real node (OAAT_CLUSTER_REAL_NODE=1): a kubelet with Debian's
# containerd, runc and CNI plugins, beside kwok's fake nodes, and a registry (Debian's
# docker-registry) that containerd pulls every public image name through. Sourced by
# cluster.sh, not run; uses its STATE_DIR, ports, pki and process helpers.
#
# What is machine-wide, hence one real node per machine (REAL_NODE_LOCK): the kubelet's cgroups
# (kubepods under /sys/fs/cgroup), the bridge REAL_NODE_BRIDGE, whose address is the node's
# InternalIP, and the nat chain REAL_NODE_CHAIN. Everything else (containerd's root, state and
# socket, the kubelet's root dir, pod logs, the CNI configuration and IPAM state, the registry's
# storage) is under <state>/realnode.
#
# The node's address is on the bridge rather than on a dummy interface: this machine's kernel has
# no dummy driver ("ip link add ... type dummy": "Error: Unknown device type.").

REAL_NODE_NAME=real-node
REAL_NODE_BRIDGE=oaatbr0
# Pods get addresses in REAL_NODE_SUBNET; the bridge (and so the node) has REAL_NODE_IP. Apart
# from SERVICE_CIDR and POD_CIDR (kwok's fake pod addresses) and checked against the machine's
# routes at up.
REAL_NODE_SUBNET=${OAAT_REAL_NODE_SUBNET:-10.213.0.0/24}
REAL_NODE_PREFIX=${REAL_NODE_SUBNET%.*}
REAL_NODE_IP=$REAL_NODE_PREFIX.1
REAL_NODE_MASK=${REAL_NODE_SUBNET#*/}
REAL_NODE_CHAIN=OAAT-REAL-NODE
REAL_NODE_LOCK=/run/lock/oaat-real-node.lock
REAL_NODE_OWNER=/run/lock/oaat-real-node.owner
# The kubernetes Service's address (the first of SERVICE_CIDR): pods reach the API server there,
# through a DNAT rule of ours (there is no kube-proxy).
KUBERNETES_SERVICE_IP=10.0.0.1

# The public registry hosts that containerd resolves through the local registry: one hosts.toml
# each, for these and for the hosts of the images built (hack/images/list.sh --hosts). The images
# are pushed under REGISTRY/<host>/<repository> (hack/images/push.sh).
REAL_NODE_REGISTRY_HOSTS=(docker.io quay.io registry.k8s.io)
# The images (make images) pushed into the node's registry at each up.
IMAGES_DIR=${IMAGES_DIR:-$REPO_ROOT/bin/images}

# Real-node components, in start order (stopped in reverse, before the control plane's).
REAL_NODE_COMPONENTS=(registry containerd kubelet)

real_node_dir() { printf '%s/realnode' "$STATE_DIR"; }
containerd_socket() { printf '%s/containerd/containerd.sock' "$(real_node_dir)"; }
registry_address() { printf '%s:%s' "$REAL_NODE_IP" "$REGISTRY_PORT"; }

# A cluster has a real node once an up with OAAT_CLUSTER_REAL_NODE=1 made its directory; down and
# status then handle it whatever the environment says.
has_real_node() { [[ -d $(real_node_dir) ]]; }

require_real_node_binaries() {
	: "${KUBELET:?the path of the kubelet: run this through make (OAAT_CLUSTER_REAL_NODE=1 make cluster-up)}"
	: "${CRI_TEARDOWN:?the path of cri-teardown: run this through make}"
	local bin
	for bin in "$KUBELET" "$CRI_TEARDOWN"; do
		[[ -x $bin ]] || die "binary not found or not executable: $bin"
	done
	for bin in containerd containerd-shim-runc-v2 runc docker-registry iptables ip; do
		command -v "$bin" >/dev/null ||
			die "$bin is missing: make installs Debian's containerd, runc, docker-registry, iptables and iproute2 (make real-node-packages)"
	done
	for bin in bridge host-local portmap loopback; do
		[[ -x /usr/lib/cni/$bin ]] || die "the CNI plugin /usr/lib/cni/$bin is missing (Debian's containernetworking-plugins)"
	done
	[[ $(id -u) == 0 ]] || die "the real node needs root (containerd, the kubelet, the bridge)"
	# The sandbox image: containerd's sandbox_image, by its public name (make passes the pause
	# image of make images).
	: "${OAAT_PAUSE_IMAGE:?the public name of the pause image (make passes it: OAAT_CLUSTER_REAL_NODE=1 make cluster-up)}"
	require_image "$OAAT_PAUSE_IMAGE" "the sandbox image"
}

# require_image NAME WHAT: dies unless make images built NAME (its images.list names it). The node
# pulls nothing from the internet: an image that was not built would only show later as a pod in
# ErrImagePull.
require_image() {
	[[ -f $IMAGES_DIR/images.list ]] ||
		die "$IMAGES_DIR/images.list is missing: the real node's images come from make images (make real-node-images)"
	cut -d' ' -f1 "$IMAGES_DIR/images.list" | grep -qxF "$1" ||
		die "$2 $1 was not built into $IMAGES_DIR: make real-node-images builds the real node's images"
}

# ---------------------------------------------------------------------------------------------
# The machine-wide lock: the owner file names the state dir whose real node holds the machine.
# It is taken at up and given back by the down that removed everything.

real_node_owner() { [[ -f $REAL_NODE_OWNER ]] && cat "$REAL_NODE_OWNER"; }

claim_machine() {
	local fd owner
	exec {fd}>"$REAL_NODE_LOCK"
	flock --timeout 60 "$fd" || die "timed out waiting for $REAL_NODE_LOCK"
	owner=$(real_node_owner || true)
	if [[ -n $owner && $owner != "$STATE_DIR" && -d $owner/realnode ]] && ! real_node_alive "$owner"; then
		log "the real node of the cluster in $owner is gone (none of ${REAL_NODE_COMPONENTS[*]} runs: a killed job or a restarted machine); removing its machine-wide leftovers"
		remove_stale_real_node "$owner"
		owner=
	fi
	if [[ -n $owner && $owner != "$STATE_DIR" && -d $owner/realnode ]]; then
		exec {fd}>&-
		die "a real node already runs on this machine, the one of the cluster in $owner (the kubelet's cgroups, the bridge $REAL_NODE_BRIDGE and the nat chain $REAL_NODE_CHAIN are machine-wide): stop it first with OAAT_CLUSTER_DIR=$owner hack/cluster/cluster.sh down"
	fi
	printf '%s\n' "$STATE_DIR" >"$REAL_NODE_OWNER"
	exec {fd}>&-
}

# real_node_alive STATE: some component of the real node of the cluster in STATE still runs.
real_node_alive() {
	(
		STATE_DIR=$1
		for name in "${REAL_NODE_COMPONENTS[@]}"; do is_running "$name" && exit 0; done
		exit 1
	)
}

# remove_stale_real_node STATE: what down_real_node would have removed, for a real node whose
# processes died without a down: the shims of its containerd, the mounts under STATE, the pods'
# network namespaces (cri-teardown's CNI DEL never ran), the kubelet's cgroups, the bridge and the
# chains.
remove_stale_real_node() {
	(
		STATE_DIR=$1
		kill_leftover_shims
		unmount_under "$STATE_DIR"
		remove_orphan_netns
		remove_kubepods_cgroups
		remove_network
	)
}

# remove_orphan_netns: containerd's pod network namespaces (/run/netns/cni-*) that no process is in
# any more; a live sandbox keeps its pause process in its namespace. Their CNI result cache too.
remove_orphan_netns() {
	local ns
	for ns in /run/netns/cni-*; do
		[[ -e $ns && -z $(ip netns pids "${ns##*/}" 2>/dev/null) ]] || continue
		ip netns delete "${ns##*/}" 2>/dev/null || { umount "$ns" 2>/dev/null && rm -f "$ns"; } || true
	done
	rm -f /var/lib/cni/results/"$CNI_NETWORK_NAME"-*
}

release_machine() {
	local fd
	exec {fd}>"$REAL_NODE_LOCK"
	flock --timeout 60 "$fd" || die "timed out waiting for $REAL_NODE_LOCK"
	if [[ $(real_node_owner || true) == "$STATE_DIR" ]]; then rm -f "$REAL_NODE_OWNER"; fi
	exec {fd}>&-
}

# ---------------------------------------------------------------------------------------------
# Credentials

# sign_cert NAME SUBJECT EXTENSIONS: <pki>/NAME.{key,crt}, signed by the cluster's CA, once.
sign_cert() {
	local pki=$STATE_DIR/pki name=$1 subject=$2 ext=$3
	[[ -f $pki/$name.crt ]] && return 0
	printf '%s\n' 'basicConstraints=CA:FALSE' 'keyUsage=digitalSignature,keyEncipherment' $ext >"$pki/$name.ext"
	openssl req -newkey rsa:2048 -nodes -subj "$subject" \
		-keyout "$pki/$name.key" -out "$pki/$name.csr" 2>/dev/null
	openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
		-CAcreateserial -days 3650 -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
	chmod 600 "$pki/$name.key"
}

ensure_real_node_pki() {
	# The kubelet's identity for the Node authorizer and NodeRestriction.
	sign_cert kubelet-client "/O=system:nodes/CN=system:node:$REAL_NODE_NAME" 'extendedKeyUsage=clientAuth'
	# The kubelet's serving certificate, which the API server checks (--kubelet-certificate-authority).
	sign_cert kubelet-serving "/CN=$REAL_NODE_NAME" \
		"extendedKeyUsage=serverAuth subjectAltName=IP:$REAL_NODE_IP,DNS:$REAL_NODE_NAME"
}

# ---------------------------------------------------------------------------------------------
# Network: the bridge with the node's address, and the DNAT of the kubernetes Service.

check_subnet_free() {
	local routes
	# Routes into or around our subnet other than the bridge's own (the default route aside).
	routes=$({
		ip -4 route show to root "$REAL_NODE_SUBNET"
		ip -4 route show to match "$REAL_NODE_IP" | grep -v '^default'
	} | grep -v "dev $REAL_NODE_BRIDGE " | sort -u || true)
	[[ -z $routes ]] || die "the real node's subnet $REAL_NODE_SUBNET clashes with routes of this machine (set OAAT_REAL_NODE_SUBNET to a free /24):
$routes"
}

ensure_bridge() {
	if ! ip link show "$REAL_NODE_BRIDGE" >/dev/null 2>&1; then
		check_subnet_free
		ip link add "$REAL_NODE_BRIDGE" type bridge
	fi
	ip addr replace "$REAL_NODE_IP/$REAL_NODE_MASK" dev "$REAL_NODE_BRIDGE"
	ip link set "$REAL_NODE_BRIDGE" up
	# Pods reach the API server (127.0.0.1) through the DNAT below: the kernel routes a packet that
	# came in on this interface to a loopback address only with route_localnet, a setting of this
	# interface alone (it goes away with it).
	sysctl -qw "net.ipv4.conf.$REAL_NODE_BRIDGE.route_localnet=1"
}

iptables_nat() { iptables -w 5 -t nat "$@"; }
iptables_filter() { iptables -w 5 -t filter "$@"; }

# The kubernetes Service (KUBERNETES_SERVICE_IP:443, what in-cluster clients are given) leads to the
# API server on 127.0.0.1 for pods on the bridge: the one Service a pod needs without kube-proxy.
ensure_service_dnat() {
	iptables_nat -N "$REAL_NODE_CHAIN" 2>/dev/null || iptables_nat -F "$REAL_NODE_CHAIN"
	iptables_nat -A "$REAL_NODE_CHAIN" -d "$KUBERNETES_SERVICE_IP/32" -p tcp --dport 443 \
		-m comment --comment "oaat real node: the kubernetes Service" \
		-j DNAT --to-destination "127.0.0.1:$APISERVER_PORT"
	iptables_nat -C PREROUTING -i "$REAL_NODE_BRIDGE" -j "$REAL_NODE_CHAIN" 2>/dev/null ||
		iptables_nat -A PREROUTING -i "$REAL_NODE_BRIDGE" -j "$REAL_NODE_CHAIN"
	# route_localnet lets the bridge reach loopback addresses: only through that DNAT, not any
	# other service of this machine on 127.0.0.1 (what the kubelet's KUBE-FIREWALL does).
	iptables_filter -N "$REAL_NODE_CHAIN" 2>/dev/null || iptables_filter -F "$REAL_NODE_CHAIN"
	iptables_filter -A "$REAL_NODE_CHAIN" -d 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT \
		-m comment --comment "oaat real node: no loopback service but the API server" -j DROP
	iptables_filter -C INPUT -i "$REAL_NODE_BRIDGE" -j "$REAL_NODE_CHAIN" 2>/dev/null ||
		iptables_filter -A INPUT -i "$REAL_NODE_BRIDGE" -j "$REAL_NODE_CHAIN"
}

remove_network() {
	while iptables_nat -D PREROUTING -i "$REAL_NODE_BRIDGE" -j "$REAL_NODE_CHAIN" 2>/dev/null; do :; done
	while iptables_filter -D INPUT -i "$REAL_NODE_BRIDGE" -j "$REAL_NODE_CHAIN" 2>/dev/null; do :; done
	local table
	for table in nat filter; do
		if iptables -w 5 -t "$table" -S "$REAL_NODE_CHAIN" >/dev/null 2>&1; then
			iptables -w 5 -t "$table" -F "$REAL_NODE_CHAIN"
			iptables -w 5 -t "$table" -X "$REAL_NODE_CHAIN"
		fi
	done
	remove_cni_leftovers
	# veths of pods whose sandbox was not torn down (cri-teardown failed): deleting one end of a
	# veth pair deletes both.
	local veth
	for veth in $(ip -o link show master "$REAL_NODE_BRIDGE" 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
		ip link del "$veth" 2>/dev/null || true
	done
	if ip link show "$REAL_NODE_BRIDGE" >/dev/null 2>&1; then
		ip link del "$REAL_NODE_BRIDGE"
	fi
}

# remove_cni_leftovers: CNI chains (portmap's CNI-HOSTPORT-*, CNI-DN-*, bridge's CNI-*) whose
# rules name our network, when a sandbox was not torn down through the CRI.
remove_cni_leftovers() {
	local table chain rule
	for table in nat filter; do
		{ iptables -w 5 -t "$table" -S 2>/dev/null | grep -F -- "\"$CNI_NETWORK_NAME\"" | grep '^-A ' || true; } |
			while read -r rule; do
				# shellcheck disable=SC2086 # the rule is iptables-save syntax, split on purpose
				eval "iptables -w 5 -t $table ${rule/-A/-D}" 2>/dev/null || true
			done
		for chain in $(iptables -w 5 -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^CNI-/ { print $2 }'); do
			# An empty CNI chain that nothing jumps to any more is a leftover of ours or of nobody.
			if [[ $(iptables -w 5 -t "$table" -S "$chain" | wc -l) == 1 ]] &&
				! iptables -w 5 -t "$table" -S | grep -q -- "-j $chain\$"; then
				iptables -w 5 -t "$table" -X "$chain" 2>/dev/null || true
			fi
		done
	done
}

# ---------------------------------------------------------------------------------------------
# Configuration files

CNI_NETWORK_NAME=oaat-real-node

write_cni_config() {
	local dir
	dir=$(real_node_dir)/cni
	mkdir -p "$dir/net.d" "$dir/ipam"
	# isGateway and ipMasq off: the bridge already has the gateway's address (ensure_bridge), so the
	# plugin need not turn on ip_forward machine-wide, and nothing here leaves the machine. Pods
	# route everything through the bridge's address (the ipam route), which is how they reach the
	# kubernetes Service's DNAT.
	cat >"$dir/net.d/10-$CNI_NETWORK_NAME.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$CNI_NETWORK_NAME",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$REAL_NODE_BRIDGE",
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$dir/ipam",
        "ranges": [[{"subnet": "$REAL_NODE_SUBNET", "gateway": "$REAL_NODE_IP", "rangeStart": "$REAL_NODE_PREFIX.10"}]],
        "routes": [{"dst": "0.0.0.0/0", "gw": "$REAL_NODE_IP"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

write_registry_config() {
	local dir
	dir=$(real_node_dir)/registry
	mkdir -p "$dir/data"
	cat >"$dir/config.yml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $dir/data
  delete:
    enabled: true
http:
  addr: $(registry_address)
EOF
}

write_containerd_config() {
	local dir host
	dir=$(real_node_dir)/containerd
	mkdir -p "$dir/root" "$dir/state" "$dir/certs.d"
	# One hosts.toml per public registry host: pull from the local registry, under the host's name
	# (override_path: the URL's path is the API root). A name not pushed there fails to pull, as
	# an image missing from a registry does.
	for host in $( (printf '%s\n' "${REAL_NODE_REGISTRY_HOSTS[@]}" && IMAGES_DIR=$IMAGES_DIR "$REPO_ROOT/hack/images/list.sh" --hosts) | sort -u); do
		mkdir -p "$dir/certs.d/$host"
		cat >"$dir/certs.d/$host/hosts.toml" <<EOF
server = "https://$host"

[host."http://$(registry_address)/v2/$host"]
  capabilities = ["pull", "resolve"]
  override_path = true
EOF
	done
	cat >"$dir/config.toml" <<EOF
version = 2
root = "$dir/root"
state = "$dir/state"
# This machine refuses to lower a process's oom_score_adj (even as root), and containerd would run
# no sandbox: restrict_oom_score_adj below, and nothing here lowers its own.
oom_score = 0

[grpc]
  address = "$(containerd_socket)"

[ttrpc]
  address = "$(containerd_socket).ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$OAAT_PAUSE_IMAGE"
  restrict_oom_score_adj = true
  enable_selinux = false

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$(real_node_dir)/cni/net.d"

  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$dir/certs.d"
EOF
}

write_kubelet_config() {
	local dir pki=$STATE_DIR/pki
	dir=$(real_node_dir)/kubelet
	mkdir -p "$dir/root" "$dir/pod-logs"
	write_kubeconfig_file "$dir/kubeconfig" kubelet \
		"client-certificate: $pki/kubelet-client.crt" "client-key: $pki/kubelet-client.key"
	# cgroup v1 here (stat -fc %T /sys/fs/cgroup: tmpfs), hence failCgroupV1 false and cgroupfs
	# (containerd's SystemdCgroup = false). No swap accounting, no eviction, no node allocatable
	# enforcement: a test node on a shared machine. The API server's calls (logs, exec) are
	# authenticated by client certificate and authorized by SubjectAccessReview (webhook), as on
	# a real cluster.
	cat >"$dir/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $REAL_NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $pki/kubelet-serving.crt
tlsPrivateKeyFile: $pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://$(containerd_socket)
podLogsDir: $dir/pod-logs
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
enforceNodeAllocatable: []
localStorageCapacityIsolation: false
evictionHard: {}
imageGCHighThresholdPercent: 100
resolvConf: /etc/resolv.conf
# The cluster DNS (services.sh: CoreDNS behind the Service kube-dns).
clusterDNS: [$CLUSTER_DNS_IP]
clusterDomain: $CLUSTER_DOMAIN
registerNode: true
maxPods: 50
# The kubelet would add KUBE-FIREWALL and canary chains to the machine's iptables and never remove
# them; ensure_service_dnat's chains do what this node needs.
makeIPTablesUtilChains: false
EOF
}

# ---------------------------------------------------------------------------------------------
# Components

start_registry() {
	require_ports_free registry "$REGISTRY_PORT"
	start_process registry docker-registry serve "$(real_node_dir)/registry/config.yml"
}

registry_ready() { curl -sf --max-time 2 "http://$(registry_address)/v2/" >/dev/null; }

# push_images: every image of make images into the registry, under its public name (skopeo
# copies only the blobs the registry lacks).
push_images() {
	IMAGES_DIR=$IMAGES_DIR "$REPO_ROOT/hack/images/push.sh" "$(registry_address)" 2>>"$(log_file registry)" ||
		die "pushing the images into the node's registry failed; see $(log_file registry)"
	log "pushed $(wc -l <"$IMAGES_DIR/images.list") images into the node's registry $(registry_address)"
}

start_containerd() {
	start_process containerd containerd --config "$(real_node_dir)/containerd/config.toml"
}

containerd_ready() { ctr --address "$(containerd_socket)" version >/dev/null; }

# forget_pushed_images: containerd's image store outlives a down (the state directory is kept),
# and the kubelet pulls a tag it already has only with imagePullPolicy Always: a rebuilt image
# pushed under the same tag (the operator's v$VERSION) would never reach the node. Forgetting the
# names just pushed makes the kubelet pull each from the registry again when a pod needs it.
forget_pushed_images() {
	local names
	mapfile -t names < <(IMAGES_DIR=$IMAGES_DIR "$REPO_ROOT/hack/images/list.sh")
	# A name the store never had is not an error here: ctr says so in the log and goes on.
	ctr --address "$(containerd_socket)" --namespace k8s.io images rm "${names[@]}" >/dev/null 2>>"$(log_file containerd)" || true
}

start_kubelet() {
	require_ports_free kubelet "$KUBELET_PORT" "$KUBELET_HEALTHZ_PORT"
	start_process kubelet "$KUBELET" \
		--config="$(real_node_dir)/kubelet/config.yaml" \
		--kubeconfig="$(real_node_dir)/kubelet/kubeconfig" \
		--root-dir="$(real_node_dir)/kubelet/root" \
		--hostname-override="$REAL_NODE_NAME" \
		--node-ip="$REAL_NODE_IP" \
		--v=1
}

kubelet_healthy() { curl -sf --max-time 2 "http://127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz" >/dev/null; }

# The API server's identity towards kubelets (--kubelet-client-certificate) may do what
# kubelet-api-admin allows (logs, exec, port-forward, stats), as kubeadm grants it.
grant_apiserver_kubelet_access() {
	kubectl_admin apply --server-side --field-manager=oaat-cluster -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: oaat-local:kube-apiserver-kubelet-api-admin
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:kubelet-api-admin
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: kube-apiserver-kubelet-client
EOF
}

node_ready() {
	[[ $(kubectl_admin get node "$REAL_NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}

up_real_node() {
	require_real_node_binaries
	ensure_real_node_pki
	ensure_bridge
	ensure_service_dnat
	write_cni_config
	write_registry_config
	write_containerd_config
	write_kubelet_config
	grant_apiserver_kubelet_access

	is_running registry || start_registry
	wait_until registry 20 registry_ready
	push_images
	is_running containerd || start_containerd
	wait_until containerd 30 containerd_ready
	forget_pushed_images
	is_running kubelet || start_kubelet
	wait_until kubelet "$READY_TIMEOUT" kubelet_healthy
	wait_until kubelet "$READY_TIMEOUT" node_ready
	untaint_not_ready "$REAL_NODE_NAME"
}

# down_real_node: the kubelet first (or it would start the pods again), then every pod sandbox
# through the CRI (containers, CNI DEL, shm and netns mounts), then containerd and what is left.
down_real_node() {
	if [[ $(real_node_owner || true) != "$STATE_DIR" ]]; then
		# An up that the machine lock stopped: the bridge, the chains and the cgroups belong to the
		# real node of another cluster.
		local name
		for name in "${REAL_NODE_COMPONENTS[@]}"; do stop_process "$name"; done
		return 0
	fi
	stop_process kubelet
	if [[ ! -x ${CRI_TEARDOWN:-} ]]; then
		log "cri-teardown not found (CRI_TEARDOWN=${CRI_TEARDOWN:-}): removing the pods' leftovers by hand"
	elif is_running containerd; then
		"$CRI_TEARDOWN" "unix://$(containerd_socket)" >>"$(log_file containerd)" 2>&1 ||
			log "cri-teardown failed (see $(log_file containerd)); removing what is left by hand"
	fi
	stop_process containerd
	kill_leftover_shims
	stop_process registry
	unmount_under "$STATE_DIR"
	remove_kubepods_cgroups
	remove_network
	release_machine
}

# kill_leftover_shims: containerd's shims outlive containerd; after cri-teardown none should be
# left, but a failed teardown leaves them and their containers running.
kill_leftover_shims() {
	local pid child
	for pid in $(pgrep -f -- "containerd-shim-runc-v2 .*-address $(containerd_socket)" || true); do
		log "killing containerd shim $pid and its containers"
		for child in $(pgrep -P "$pid" || true); do kill -KILL "$child" 2>/dev/null || true; done
		kill -KILL "$pid" 2>/dev/null || true
	done
}

# unmount_under DIR: every mount point under DIR, deepest first (the kubelet's pod volumes and the
# rshared bind mount of its root dir, containerd's rootfs and shm mounts).
unmount_under() {
	local target tries=0
	while [[ -n $(mounts_under "$1") ]]; do
		((tries++ < 5)) || die "mounts left under $1: $(mounts_under "$1" | tr '\n' ' ')"
		for target in $(mounts_under "$1" | sort -r); do
			umount "$target" 2>/dev/null || umount -l "$target" 2>/dev/null || true
		done
	done
}

# remove_kubepods_cgroups: the kubelet's cgroup tree (cgroupfs driver, cgroup v1: kubepods under
# each controller), empty once every pod is gone; deepest first. A cgroup that still holds a
# process is left (rmdir refuses it).
remove_kubepods_cgroups() {
	local dir
	for dir in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
		[[ -d $dir ]] || continue
		find "$dir" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	done
}

mounts_under() { findmnt -rn -o TARGET | awk -v dir="$1/" 'index($0, dir) == 1' | sort -u; }
