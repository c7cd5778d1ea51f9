# shellcheck shell=bash
# Services and cluster DNS for the local cluster's real node, as a cluster has them: kube-proxy
# (iptables mode) on the host beside the kubelet, and CoreDNS as a Deployment in kube-system
# behind the Service kube-dns at CLUSTER_DNS_IP, which the kubelet gives pods as their nameserver
# (clusterDNS). Pods then resolve <service>.<namespace>.svc names and reach Service addresses:
# OLM's catalog operator reaches a CatalogSource's registry pod through its Service this way.
# Sourced by cluster.sh after realnode.sh, not run; uses their state dir, pki and helpers.
#
# kube-proxy's chains (KUBE-*) are machine-wide, like the real node itself (one per machine):
# down removes them with `kube-proxy --cleanup`.
#
# The kubernetes Service has no endpoints here (the API server listens on 127.0.0.1, which an
# Endpoints object may not hold): kube-proxy leaves its address alone and realnode.sh's DNAT
# leads pods to the API server, as before.

CLUSTER_DNS_IP=10.0.0.10
CLUSTER_DOMAIN=cluster.local

# The CoreDNS image (make images, IMAGES=coredns): its public name, which make passes.
COREDNS_NAMESPACE=kube-system

REAL_NODE_COMPONENTS+=(kube-proxy)

services_dir() { printf '%s/services' "$(real_node_dir)"; }

require_services_binaries() {
	: "${KUBE_PROXY:?the path of kube-proxy: run this through make (OAAT_CLUSTER_REAL_NODE=1 make cluster-up)}"
	: "${OAAT_COREDNS_IMAGE:?the public name of the CoreDNS image (make passes it)}"
	[[ -x $KUBE_PROXY ]] || die "binary not found or not executable: $KUBE_PROXY"
	require_image "$OAAT_COREDNS_IMAGE" "the cluster DNS image"
}

# The kube-proxy's ports (health and metrics), picked at the first up of the node and kept.
load_or_pick_service_ports() {
	local file
	file=$(services_dir)/ports
	if [[ -f $file ]]; then
		# shellcheck disable=SC1090 # written below: two NAME=number lines
		source "$file"
	fi
	: "${KUBE_PROXY_HEALTHZ_PORT:=$(pick_free_port)}"
	: "${KUBE_PROXY_METRICS_PORT:=$(pick_free_port "$KUBE_PROXY_HEALTHZ_PORT")}"
	printf 'KUBE_PROXY_HEALTHZ_PORT=%s\nKUBE_PROXY_METRICS_PORT=%s\n' \
		"$KUBE_PROXY_HEALTHZ_PORT" "$KUBE_PROXY_METRICS_PORT" >"$file"
}

# kube-proxy authenticates as system:kube-proxy, which the built-in binding system:node-proxier
# authorizes, as kubeadm's kube-proxy is.
write_kube_proxy_config() {
	local dir pki=$STATE_DIR/pki
	dir=$(services_dir)
	sign_cert kube-proxy "/CN=system:kube-proxy" 'extendedKeyUsage=clientAuth'
	write_kubeconfig_file "$dir/kube-proxy.kubeconfig" kube-proxy \
		"client-certificate: $pki/kube-proxy.crt" "client-key: $pki/kube-proxy.key"
	# clusterCIDR: traffic to a Service from outside the pods' subnet is masqueraded. The conntrack
	# settings are left as the machine has them (kube-proxy would raise nf_conntrack_max and the
	# TCP timeouts machine-wide). Node ports only on the node's address.
	cat >"$dir/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: $dir/kube-proxy.kubeconfig
hostnameOverride: $REAL_NODE_NAME
bindAddress: $REAL_NODE_IP
clusterCIDR: $REAL_NODE_SUBNET
healthzBindAddress: 127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$KUBE_PROXY_METRICS_PORT
nodePortAddresses: ["$REAL_NODE_IP/32"]
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
}

start_kube_proxy() {
	require_ports_free kube-proxy "$KUBE_PROXY_HEALTHZ_PORT" "$KUBE_PROXY_METRICS_PORT"
	start_process kube-proxy "$KUBE_PROXY" --config="$(services_dir)/kube-proxy.yaml" --v=1
}

kube_proxy_healthy() { curl -sf --max-time 2 "http://127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT/healthz" >/dev/null; }

# CoreDNS as kubeadm deploys it (its addon manifests: ServiceAccount, ClusterRole system:coredns,
# the Corefile, the Deployment, the Service kube-dns at a fixed ClusterIP), one replica.
coredns_manifests() {
	cat <<EOF
apiVersion: v1
kind: ServiceAccount
metadata:
  name: coredns
  namespace: $COREDNS_NAMESPACE
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:coredns
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [""]
  resources: [nodes]
  verbs: [get]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:coredns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:coredns
subjects:
- kind: ServiceAccount
  name: coredns
  namespace: $COREDNS_NAMESPACE
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: coredns
  namespace: $COREDNS_NAMESPACE
data:
  Corefile: |
    .:53 {
        errors
        health {
           lameduck 5s
        }
        ready
        kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
           pods insecure
           fallthrough in-addr.arpa ip6.arpa
           ttl 30
        }
        prometheus :9153
        forward . /etc/resolv.conf {
           max_concurrent 1000
        }
        cache 30
        loop
        reload
        loadbalance
    }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: $COREDNS_NAMESPACE
  labels: {k8s-app: kube-dns}
spec:
  replicas: 1
  selector:
    matchLabels: {k8s-app: kube-dns}
  template:
    metadata:
      labels: {k8s-app: kube-dns}
    spec:
      priorityClassName: system-cluster-critical
      serviceAccountName: coredns
      dnsPolicy: Default
      nodeSelector: {kubernetes.io/os: linux}
      containers:
      - name: coredns
        image: $OAAT_COREDNS_IMAGE
        imagePullPolicy: IfNotPresent
        args: [-conf, /etc/coredns/Corefile]
        resources:
          limits: {memory: 170Mi}
          requests: {cpu: 100m, memory: 70Mi}
        volumeMounts:
        - {name: config-volume, mountPath: /etc/coredns, readOnly: true}
        ports:
        - {containerPort: 53, name: dns, protocol: UDP}
        - {containerPort: 53, name: dns-tcp, protocol: TCP}
        - {containerPort: 9153, name: metrics, protocol: TCP}
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {add: [NET_BIND_SERVICE], drop: [ALL]}
          readOnlyRootFilesystem: true
        livenessProbe:
          httpGet: {path: /health, port: 8080, scheme: HTTP}
          initialDelaySeconds: 60
          timeoutSeconds: 5
          failureThreshold: 5
        readinessProbe:
          httpGet: {path: /ready, port: 8181, scheme: HTTP}
      volumes:
      - name: config-volume
        configMap:
          name: coredns
          items: [{key: Corefile, path: Corefile}]
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: $COREDNS_NAMESPACE
  labels: {k8s-app: kube-dns, kubernetes.io/name: CoreDNS}
spec:
  selector: {k8s-app: kube-dns}
  clusterIP: $CLUSTER_DNS_IP
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
  - {name: metrics, port: 9153, protocol: TCP}
EOF
}

coredns_available() {
	[[ $(kubectl_admin -n "$COREDNS_NAMESPACE" get deployment coredns -o jsonpath='{.status.availableReplicas}' 2>/dev/null) == 1 ]]
}

# up_services: after up_real_node (kube-proxy reads the Node the kubelet registered).
up_services() {
	require_services_binaries
	mkdir -p "$(services_dir)"
	load_or_pick_service_ports
	write_kube_proxy_config
	# Pods reach Service addresses through this node's own address (a Service backed by a pod on
	# the same bridge): the bridge forwards what it routes, as a node's pod interface does. A
	# setting of the bridge alone, gone with it.
	sysctl -qw "net.ipv4.conf.$REAL_NODE_BRIDGE.forwarding=1"
	is_running kube-proxy || start_kube_proxy
	wait_until kube-proxy "$READY_TIMEOUT" kube_proxy_healthy
	coredns_manifests | kubectl_admin apply --server-side --field-manager=oaat-cluster -f - >/dev/null
	wait_for_coredns
}

# wait_for_coredns: CoreDNS is a pod, not a process of ours: while waiting, the kubelet that runs
# it must stay up.
wait_for_coredns() {
	local deadline=$((SECONDS + READY_TIMEOUT))
	until coredns_available; do
		is_running kubelet || fail_start kubelet "the kubelet exited"
		if ((SECONDS >= deadline)); then
			kubectl_admin -n "$COREDNS_NAMESPACE" get pods -o wide >&2 || true
			die "CoreDNS did not become available in ${READY_TIMEOUT}s"
		fi
		sleep 0.5
	done
}

# down_services: before down_real_node; kube-proxy's chains go with --cleanup (CoreDNS's pod goes
# with the node's pods).
down_services() {
	stop_process kube-proxy
	# An up that the machine lock stopped: the KUBE-* chains are the other cluster's kube-proxy's.
	[[ $(real_node_owner || true) == "$STATE_DIR" ]] || return 0
	if [[ -x ${KUBE_PROXY:-} ]]; then
		"$KUBE_PROXY" --cleanup --v=0 >>"$(log_file kube-proxy)" 2>&1 ||
			log "kube-proxy --cleanup failed; see $(log_file kube-proxy)"
	elif iptables -w 5 -t nat -S KUBE-SERVICES >/dev/null 2>&1; then
		log "kube-proxy not found (KUBE_PROXY=${KUBE_PROXY:-}): its chains KUBE-* are left in iptables"
	fi
	remove_kube_firewall
}

# remove_kube_firewall: kube-proxy also makes the kubelet's KUBE-FIREWALL chain (filter table,
# jumped to from INPUT and OUTPUT, in both address families) and --cleanup leaves it, as it
# belongs to the kubelet; ours makes none (makeIPTablesUtilChains: false), so it is kube-proxy's.
remove_kube_firewall() {
	local cmd hook
	for cmd in iptables ip6tables; do
		command -v "$cmd" >/dev/null || continue
		for hook in INPUT OUTPUT; do
			while "$cmd" -w 5 -t filter -D "$hook" -j KUBE-FIREWALL 2>/dev/null; do :; done
		done
		if "$cmd" -w 5 -t filter -S KUBE-FIREWALL >/dev/null 2>&1; then
			"$cmd" -w 5 -t filter -F KUBE-FIREWALL
			"$cmd" -w 5 -t filter -X KUBE-FIREWALL
		fi
	done
}
