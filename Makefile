# VERSION defines the project version for the bundle.
# Update this value when you upgrade the version of your project.
# To re-generate a bundle for another specific version without changing the standard setup, you can:
# - use the VERSION as arg of the bundle target (e.g make bundle VERSION=0.0.2)
# - use environment variables to overwrite this value (e.g export VERSION=0.0.2)
VERSION ?= 0.3.0

# The previous release, which this one replaces (the CSV's spec.replaces and olm.skipRange in
# config/manifests/bases): its version and the commit it was built from, recorded here because
# no tag travels with the tree (0.2.0 is the commit where VERSION became 0.2.0).
# make images builds its operator, bundle and catalog images from that commit's tree (git archive),
# so that the upgrade test always starts from the real previous release; make catalog puts its
# bundle in the channel before this one.
PREVIOUS_VERSION := 0.2.0
PREVIOUS_COMMIT := bf111f051d04ceed0a4a49652242132246f743b6
# The Helm chart's gated objects the previous release lacks (hack/chartgen -absent): 0.2.0 has no
# PodDisruptionBudget.
PREVIOUS_CHART_ABSENT := PodDisruptionBudget/oaat-operator-controller-manager

# The identity every shipped build carries (internal/version): the version, and the commit the tree
# was built from (a tree outside git, e.g. the previous release's git archive, passes REVISION).
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
VERSION_LDFLAGS := -X github.com/oaat-io/oaat-operator/internal/version.version=$(VERSION) \
	-X github.com/oaat-io/oaat-operator/internal/version.revision=$(REVISION)
# The flags of every Go binary a release ships (the manager in the operator image, the plugin's
# archives): no path of this machine, no VCS stamp, no symbol table, the identity above.
RELEASE_GO_FLAGS = -trimpath -buildvcs=false -ldflags "-s -w $(VERSION_LDFLAGS)"
# Every Go build and test of this tree is static and path-free, as the release's builds are
# (CGO_ENABLED=0, -trimpath): the operator image, the previous release's, the plugin's archives,
# the tools, `go test`, lint and the local builds then compile each package once into Go's cache
# and share it, instead of once with cgo and paths for the tests and again for the images.
export CGO_ENABLED := 0
export GOFLAGS := $(strip $(filter-out -trimpath,$(GOFLAGS)) -trimpath)
# The time of the commit: the created time of the release's images and of every file in its
# archives, never the time of the build, so that building the same commit again gives the same
# bytes (reproducible-builds.org's variable).
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)

# CHANNELS define the bundle channels used in the bundle.
# Add a new line here if you would like to change its default config. (E.g CHANNELS = "candidate,fast,stable")
# To re-generate a bundle for other specific channels without changing the standard setup, you can:
# - use the CHANNELS as arg of the bundle target (e.g make bundle CHANNELS=candidate,fast,stable)
# - use environment variables to overwrite this value (e.g export CHANNELS="candidate,fast,stable")
ifneq ($(origin CHANNELS), undefined)
BUNDLE_CHANNELS := --channels=$(CHANNELS)
endif

# DEFAULT_CHANNEL defines the default channel used in the bundle.
# Add a new line here if you would like to change its default config. (E.g DEFAULT_CHANNEL = "stable")
# To re-generate a bundle for any other default channel without changing the default setup, you can:
# - use the DEFAULT_CHANNEL as arg of the bundle target (e.g make bundle DEFAULT_CHANNEL=stable)
# - use environment variables to overwrite this value (e.g export DEFAULT_CHANNEL="stable")
ifneq ($(origin DEFAULT_CHANNEL), undefined)
BUNDLE_DEFAULT_CHANNEL := --default-channel=$(DEFAULT_CHANNEL)
endif
BUNDLE_METADATA_OPTS ?= $(BUNDLE_CHANNELS) $(BUNDLE_DEFAULT_CHANNEL)

# IMAGE_TAG_BASE defines the image registry namespace and part of the image name for remote images.
# This variable is used to construct full image tags for bundle and catalog images.
IMAGE_TAG_BASE ?= quay.io/oaat-io/oaat-operator

# BUNDLE_IMG defines the image:tag used for the bundle.
# You can use it as an arg. (E.g make bundle-build BUNDLE_IMG=<some-registry>/<project-name-bundle>:<tag>)
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)

# BUNDLE_GEN_FLAGS are the flags passed to the operator-sdk generate bundle command.
BUNDLE_GEN_FLAGS ?= -q --overwrite --version $(VERSION) $(BUNDLE_METADATA_OPTS)

# USE_IMAGE_DIGESTS defines if images are resolved via tags or digests.
# You can enable this value if you would like to use SHA Based Digests.
# To enable set flag to true
USE_IMAGE_DIGESTS ?= false
ifeq ($(USE_IMAGE_DIGESTS), true)
	BUNDLE_GEN_FLAGS += --use-image-digests
endif

# Image URL to use all building/pushing image targets. The bundle's CSV names this image, so the
# default is the release image of VERSION; config/manager/kustomization.yaml is committed with it.
IMG ?= $(IMAGE_TAG_BASE):v$(VERSION)

# CATALOG_IMG defines the image:tag used for the file-based catalog (catalog/, catalog.Dockerfile).
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:v$(VERSION)

# SCORECARD_IMG is the image of the custom scorecard tests (tests/scorecard); config/scorecard's
# patches name it, with this tag.
SCORECARD_IMG ?= $(IMAGE_TAG_BASE)-scorecard:v$(VERSION)

# CONTAINER_TOOL defines the container tool to be used for building images.
# Be aware that the target commands are only tested with Docker which is
# scaffolded by default. However, you might want to replace it to use other
# tools. (i.e. podman)
CONTAINER_TOOL ?= docker

# Tools: each is built from a pinned Go module under hack/tools/ into a per-user cache outside the
# clone (TOOLS_CACHE), as envtest's setup-envtest keeps its binaries: a directory per tools module,
# named after a hash of its go.mod and go.sum, and the version in the file name. A file that exists
# is not built again, so a second clone, a CI run or `rm -rf bin` builds no tool again. The versions
# are read from those go.mod files (and nowhere else). Defined here, before the rules that name the
# files as prerequisites. What the clone itself builds (the manager, the images) goes into bin/.

## Location to install dependencies to
LOCALBIN ?= $(CURDIR)/bin
TOOLS_DIR := $(CURDIR)/hack/tools
TOOLS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/oaat-operator/tools
# TOOLBIN_<module>: the cache directory of hack/tools/<module>'s binaries.
TOOL_MODULES := controlplane controlplane-floor coredns crd-ref-docs cyclonedx-gomod devtools etcd golangci-lint grpc-health-probe helm krew kwok olm operator-sdk opm
$(foreach m,$(TOOL_MODULES),$(eval TOOLBIN_$(m) := $(TOOLS_CACHE)/$(m)-$(shell cat $(TOOLS_DIR)/$(m)/go.mod $(TOOLS_DIR)/$(m)/go.sum | sha256sum | cut -c1-12)))

# gomod-version prints the version at which hack/tools/$(1)/go.mod requires module $(2).
gomod-version = $(shell awk '$$1 == "require" && $$2 == "$(2)" { print $$3; exit } $$1 == "$(2)" && $$2 ~ /^v/ { print $$2; exit }' $(TOOLS_DIR)/$(1)/go.mod)

## Tool Versions
KUBE_VERSION := $(call gomod-version,controlplane,k8s.io/kubernetes)
# The oldest Kubernetes the bundle's CSV claims (spec.minKubeVersion): its kube-apiserver runs the
# admission tests (tests/admission) beside KUBE_VERSION's.
KUBE_VERSION_FLOOR := $(call gomod-version,controlplane-floor,k8s.io/kubernetes)
ETCD_VERSION := $(call gomod-version,etcd,go.etcd.io/etcd/server/v3)
KWOK_VERSION := $(call gomod-version,kwok,sigs.k8s.io/kwok)
CONTROLLER_TOOLS_VERSION := $(call gomod-version,devtools,sigs.k8s.io/controller-tools)
KUSTOMIZE_VERSION := $(call gomod-version,devtools,sigs.k8s.io/kustomize/kustomize/v5)
OPERATOR_SDK_VERSION := $(call gomod-version,operator-sdk,github.com/operator-framework/operator-sdk)
OPERATOR_SDK_KUBE_VERSION := $(call gomod-version,operator-sdk,k8s.io/api)
OPM_VERSION := $(call gomod-version,opm,github.com/operator-framework/operator-registry)
OLM_VERSION := $(call gomod-version,olm,github.com/operator-framework/operator-lifecycle-manager)
GOLANGCI_LINT_VERSION := $(call gomod-version,golangci-lint,github.com/golangci/golangci-lint/v2)
KUBE_API_LINTER_VERSION := $(call gomod-version,golangci-lint,sigs.k8s.io/kube-api-linter)
COREDNS_VERSION := $(call gomod-version,coredns,github.com/coredns/coredns)
CRD_REF_DOCS_VERSION := $(call gomod-version,crd-ref-docs,github.com/elastic/crd-ref-docs)
KREW_VERSION := $(call gomod-version,krew,sigs.k8s.io/krew)
HELM_VERSION := $(call gomod-version,helm,helm.sh/helm/v4)
CYCLONEDX_GOMOD_VERSION := $(call gomod-version,cyclonedx-gomod,github.com/CycloneDX/cyclonedx-gomod)

$(foreach v,KUBE_VERSION KUBE_VERSION_FLOOR ETCD_VERSION KWOK_VERSION CONTROLLER_TOOLS_VERSION KUSTOMIZE_VERSION \
  OPERATOR_SDK_VERSION OPERATOR_SDK_KUBE_VERSION OPM_VERSION OLM_VERSION GOLANGCI_LINT_VERSION KUBE_API_LINTER_VERSION \
  COREDNS_VERSION CRD_REF_DOCS_VERSION KREW_VERSION HELM_VERSION CYCLONEDX_GOMOD_VERSION,\
  $(if $($(v)),,$(error $(v) could not be read from the go.mod files under hack/tools)))

## Tool Binaries
CONTROLLER_GEN := $(TOOLBIN_devtools)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
KUSTOMIZE := $(TOOLBIN_devtools)/kustomize-$(KUSTOMIZE_VERSION)
KUBE_APISERVER := $(TOOLBIN_controlplane)/kube-apiserver-$(KUBE_VERSION)
KUBE_APISERVER_FLOOR := $(TOOLBIN_controlplane-floor)/kube-apiserver-$(KUBE_VERSION_FLOOR)
KUBE_CONTROLLER_MANAGER_FLOOR := $(TOOLBIN_controlplane-floor)/kube-controller-manager-$(KUBE_VERSION_FLOOR)
KUBE_SCHEDULER_FLOOR := $(TOOLBIN_controlplane-floor)/kube-scheduler-$(KUBE_VERSION_FLOOR)
KUBE_CONTROLLER_MANAGER := $(TOOLBIN_controlplane)/kube-controller-manager-$(KUBE_VERSION)
KUBE_SCHEDULER := $(TOOLBIN_controlplane)/kube-scheduler-$(KUBE_VERSION)
KUBECTL_BIN := $(TOOLBIN_controlplane)/kubectl-$(KUBE_VERSION)
KUBELET := $(TOOLBIN_controlplane)/kubelet-$(KUBE_VERSION)
CRI_TEARDOWN := $(LOCALBIN)/cri-teardown-$(KUBE_VERSION)
ETCD := $(TOOLBIN_etcd)/etcd-$(ETCD_VERSION)
KWOK := $(TOOLBIN_kwok)/kwok-$(KWOK_VERSION)
OPERATOR_SDK := $(TOOLBIN_operator-sdk)/operator-sdk-$(OPERATOR_SDK_VERSION)
SCORECARD_TEST := $(TOOLBIN_operator-sdk)/scorecard-test-$(OPERATOR_SDK_VERSION)
OPM := $(TOOLBIN_opm)/opm-$(OPM_VERSION)
OLM := $(TOOLBIN_olm)/olm-$(OLM_VERSION)
CATALOG_OPERATOR := $(TOOLBIN_olm)/catalog-$(OLM_VERSION)
GOLANGCI_LINT := $(TOOLBIN_golangci-lint)/golangci-lint-$(GOLANGCI_LINT_VERSION)
KUBE_API_LINTER := $(TOOLBIN_golangci-lint)/kube-api-linter-$(KUBE_API_LINTER_VERSION)

# The OLM image's utilities (make images, IMAGES=olm): cpb, which the bundle unpack Job copies
# into the bundle's container, and copy-content.
CPB := $(TOOLBIN_olm)/cpb-$(OLM_VERSION)
COPY_CONTENT := $(TOOLBIN_olm)/copy-content-$(OLM_VERSION)
# The real node's Service routing and cluster DNS (hack/cluster/services.sh).
KUBE_PROXY := $(TOOLBIN_controlplane)/kube-proxy-$(KUBE_VERSION)
COREDNS := $(TOOLBIN_coredns)/coredns-$(COREDNS_VERSION)
# The API reference's generator (make api-docs).
CRD_REF_DOCS := $(TOOLBIN_crd-ref-docs)/crd-ref-docs-$(CRD_REF_DOCS_VERSION)
# kubectl's plugin manager: the release's plugin is installed with it as a user does, offline
# (kubectl krew install --manifest --archive; tests/realnode).
KREW := $(TOOLBIN_krew)/krew-$(KREW_VERSION)
# Helm: the release's chart is linted, rendered, installed, upgraded and uninstalled with it as a
# user does (tests/release, tests/realnode).
HELM := $(TOOLBIN_helm)/helm-$(HELM_VERSION)
# The SBOMs of the release's binaries (make release).
CYCLONEDX_GOMOD := $(TOOLBIN_cyclonedx-gomod)/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION)
# The gRPC health probe of the catalog image (make catalog-image); here, before test-prebuild names it.
GRPC_HEALTH_PROBE_VERSION := $(call gomod-version,grpc-health-probe,github.com/grpc-ecosystem/grpc-health-probe)
$(if $(GRPC_HEALTH_PROBE_VERSION),,$(error GRPC_HEALTH_PROBE_VERSION could not be read from hack/tools/grpc-health-probe/go.mod))
GRPC_HEALTH_PROBE := $(TOOLBIN_grpc-health-probe)/grpc_health_probe-$(GRPC_HEALTH_PROBE_VERSION)

# The local cluster's binaries, and the variables through which hack/cluster/cluster.sh takes
# them. Defined before any rule names them as prerequisites: make expands prerequisites when it
# reads a rule, so a variable defined further down would be empty there.
# PROCESSES (hack/processes) starts and stops the cluster's components for hack/lib/processes.sh.
PROCESSES := $(LOCALBIN)/processes
CLUSTER_BINARIES := $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KUBECTL_BIN) $(ETCD) $(KWOK) $(PROCESSES)
CLUSTER_ENV := KUBE_APISERVER=$(KUBE_APISERVER) KUBE_CONTROLLER_MANAGER=$(KUBE_CONTROLLER_MANAGER) \
	KUBE_SCHEDULER=$(KUBE_SCHEDULER) KUBECTL=$(KUBECTL_BIN) ETCD=$(ETCD) KWOK=$(KWOK) PROCESSES=$(PROCESSES) \
	KUBELET=$(KUBELET) CRI_TEARDOWN=$(CRI_TEARDOWN) KUBE_PROXY=$(KUBE_PROXY)
# The real node's (OAAT_CLUSTER_REAL_NODE=1, hack/cluster/realnode.sh): built, and the Debian
# packages installed, only by the targets that start one, so that the kwok-only suites do not pay.
REAL_NODE_BINARIES := $(KUBELET) $(CRI_TEARDOWN) $(KUBE_PROXY)
# cluster-up's prerequisites: the real node's too when OAAT_CLUSTER_REAL_NODE=1.
CLUSTER_UP_PREREQUISITES := $(CLUSTER_BINARIES) $(if $(filter 1,$(OAAT_CLUSTER_REAL_NODE)),$(REAL_NODE_BINARIES) real-node-packages real-node-images)
# The images of a cluster with a real node (make images IMAGES=...): what the node itself runs, the
# sandbox (hack/cluster/realnode.sh) and the cluster DNS (hack/cluster/services.sh), which
# cluster.sh refuses to start without; then what the real-node targets run on it, the samples'
# busybox and restic and the operator (make deploy, test-realnode). cluster.sh pushes every image built, these
# and any other.
REAL_NODE_CLUSTER_IMAGES := pause coredns
REAL_NODE_IMAGES := $(REAL_NODE_CLUSTER_IMAGES) busybox restic operator

# KUBECTL is the kubectl that install/deploy use; the pinned one unless overridden.
KUBECTL ?= $(KUBECTL_BIN)

# Without these the Kubernetes binaries report v0.0.0-master, and OLM then takes the cluster
# for 0.0.0 and refuses every CSV with a minKubeVersion.
# kube-version-ldflags are the linker flags of the Kubernetes binaries of version $(1).
kube-version-ldflags = -X k8s.io/component-base/version.gitVersion=$(1) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(patsubst v%,%,$(1)))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(patsubst v%,%,$(1)))) \
	-X k8s.io/component-base/version.gitTreeState=clean
KUBE_LDFLAGS := $(call kube-version-ldflags,$(KUBE_VERSION))

# The operator-framework tools report these versions (`operator-sdk version`, `opm version`,
# `olm --version`); operator-sdk also scaffolds its ImageVersion into scorecard configurations.
# containers_image_openpgp keeps containers/image free of cgo (gpgme), as upstream builds do.
OPERATOR_SDK_LDFLAGS := $(foreach v,Version GitVersion ImageVersion,\
	-X github.com/operator-framework/operator-sdk/internal/version.$(v)=$(OPERATOR_SDK_VERSION)) \
	-X github.com/operator-framework/operator-sdk/internal/version.KubernetesVersion=$(patsubst v0.%,v1.%,$(OPERATOR_SDK_KUBE_VERSION))
OPM_LDFLAGS := -X github.com/operator-framework/operator-registry/cmd/opm/version.opmVersion=$(OPM_VERSION)
OLM_LDFLAGS := -X github.com/operator-framework/operator-lifecycle-manager/pkg/version.OLMVersion=$(OLM_VERSION)
OPERATOR_FRAMEWORK_TAGS := json1,containers_image_openpgp

# Setting SHELL to bash allows bash commands to be executed by recipes.
# Options are set to exit when a recipe line exits non-zero or a piped command fails.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

# The help target prints out all targets with their descriptions organized
# beneath their categories. The categories are represented by '##@' and the
# target descriptions by '##'. The awk command is responsible for reading the
# entire set of makefiles included in this invocation, looking for lines of the
# file as xyz: ## something, and then pretty-format the target and help. Then,
# if there's a line with ##@ something, that gets pretty-printed as a category.
# More info on the usage of ANSI control characters for terminal formatting:
# https://en.wikipedia.org/wiki/ANSI_escape_code#SGR_parameters
# More info on the awk command:
# http://linuxcommand.org/lc3_adv_awk.php

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-24s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate ClusterRole and CustomResourceDefinition objects (config/rbac/role.yaml, config/crd/bases).
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd:generateEmbeddedObjectMeta=true paths="./..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate code containing DeepCopy, DeepCopyInto, and DeepCopyObject method implementations, and the generated admission rules (hack/admissiongen).
	go run ./hack/admissiongen api/v1alpha1/zz_generated.admission.go
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./..."

.PHONY: fmt
fmt: ## Run gofmt on every Go file of the tree, build-tagged suites (e2e, olmcatalog, ...) included, which go fmt ./... skips.
	gofmt -l -w $$(git ls-files --cached --others --exclude-standard '*.go')

.PHONY: vet
vet: ## Run go vet against code.
	go vet ./...

# envtest (controller-runtime) starts the API server, etcd and kubectl named by these variables;
# tests/admission also starts the oldest supported API server (KUBE_APISERVER_FLOOR).
ENVTEST_ENV = TEST_ASSET_KUBE_APISERVER=$(KUBE_APISERVER) TEST_ASSET_ETCD=$(ETCD) TEST_ASSET_KUBECTL=$(KUBECTL_BIN) \
	TEST_ASSET_KUBE_APISERVER_FLOOR=$(KUBE_APISERVER_FLOOR)

# Two pairs of suites run side by side (TEST_PAIR; --output-sync prints each one's output whole
# when it ends): the integration suite, which mostly waits on its API servers, beside test-olm,
# which builds the operator's image; the real-node suite beside the OLM install on kwok's nodes,
# two clusters of their own (state directories and ports apart) that both mostly wait on their
# control planes. The code and manifests were generated once, by test's prerequisites: -o keeps
# the pairs from generating them again while the other suite of the pair reads them.
TEST_PAIR = $(MAKE) -j2 --output-sync=target -o manifests -o generate -o fmt -o vet

# On a cold machine the tools that only the later suites use (Helm, OLM's binaries, krew,
# cyclonedx-gomod, grpc_health_probe, the floor's controller-manager and scheduler) and the
# plugin's cross-compiled packages would be built one after the other in front of those suites.
# test builds them instead at nice 19 (test-prebuild), beside its first steps, whose suites
# mostly wait (the integration suite on its API servers, the e2e suite on kwok's cluster): they
# take only the CPU the suites leave (test-prebuild-start). Before the real-node suite, test waits for them
# (PREBUILD_LOCK) and prints their log, with each build's time (contended: not a cold figure).
# On a warm machine there is nothing to build.
PREBUILD_TOOLS = $(HELM) $(OLM) $(CATALOG_OPERATOR) $(CPB) $(COPY_CONTENT) $(KREW) $(CYCLONEDX_GOMOD) \
	$(GRPC_HEALTH_PROBE) $(KUBE_CONTROLLER_MANAGER_FLOOR) $(KUBE_SCHEDULER_FLOOR)
PREBUILD_LOCK = $(LOCALBIN)/.prebuild.lock
PREBUILD_LOG = $(LOCALBIN)/prebuild.log

.PHONY: test-prebuild
test-prebuild: $(PREBUILD_TOOLS) ## Build the tools of the later suites and the plugin's cross-compiled packages (test runs it at nice 19 beside its first steps).
	$(MAKE) --no-print-directory krew-archives KREW_DIR=$(LOCALBIN)/prebuild-krew
	rm -rf $(LOCALBIN)/prebuild-krew

# test-prebuild-start starts test-prebuild in the background, holding PREBUILD_LOCK until it ends
# (the lock passes to the background job with its file descriptor); test's first prerequisite,
# so that it runs beside the rest of them too.
.PHONY: test-prebuild-start
test-prebuild-start:
	@mkdir -p $(LOCALBIN); exec 9>$(PREBUILD_LOCK); flock 9; \
		(nice -n 19 $(MAKE) --no-print-directory test-prebuild >$(PREBUILD_LOG) 2>&1; echo "test-prebuild: exit $$?" >>$(PREBUILD_LOG)) &

.PHONY: test
test: test-prebuild-start system-packages manifests generate fmt vet $(KUBE_APISERVER) $(KUBE_APISERVER_FLOOR) $(ETCD) $(KUBECTL_BIN) ## Run all tests: unit (coverage in cover.out), integration (test-integration), OLM packaging (test-olm), end to end (test-e2e, test-realnode), the OLM install (test-olm-install), the install from the catalog image (test-olm-catalog) and the release (test-release).
	$(call timed,go test (all but integration),$(ENVTEST_ENV) go test $$(go list ./... | grep -v /tests/integration) -coverprofile cover.out)
	$(call timed,test-integration and test-olm,$(TEST_PAIR) test-integration test-olm)
	$(call timed,test-e2e,$(MAKE) test-e2e)
	$(call timed,waiting for test-prebuild,flock $(PREBUILD_LOCK) cat $(PREBUILD_LOG))
	$(call timed,test-realnode and test-olm-install,$(TEST_PAIR) test-realnode test-olm-install)
	$(call timed,test-olm-catalog and test-floor,$(TEST_PAIR) test-olm-catalog test-floor)
	$(call timed,test-release,$(MAKE) test-release)

# timed runs the command $(2) (echoed as make would), then says how long step $(1) took: the
# figures of docs/development.md.
define timed
@echo '$(2)'; start=$$(date +%s); $(2); echo "=== $(1) took $$(( $$(date +%s) - start ))s"
endef

# The integration suite (tests/integration) runs on INTEGRATION_PROCS parallel Ginkgo processes,
# each with its own envtest control plane (a kube-apiserver and an etcd) and its own managers: its
# specs mostly wait on the API server and on their own timers, so processes overlap that waiting
# (one process used about a quarter of a core). Ginkgo's CLI is built from this module's go.mod,
# at the version of the library the suite links.
INTEGRATION_PROCS ?= 3
# INTEGRATION_FOCUS runs only the specs whose description matches this regular expression.
INTEGRATION_FOCUS ?=
GINKGO_VERSION := $(shell awk '$$1 == "github.com/onsi/ginkgo/v2" { print $$2; exit }' go.mod)
GINKGO := $(LOCALBIN)/ginkgo-$(GINKGO_VERSION)

.PHONY: test-integration
test-integration: $(GINKGO) $(KUBE_APISERVER) $(ETCD) $(KUBECTL_BIN) ## Run the integration suite (real kube-apiserver and etcd, INTEGRATION_PROCS parallel processes).
	$(ENVTEST_ENV) $(GINKGO) --procs=$(INTEGRATION_PROCS) --timeout=30m $(if $(INTEGRATION_FOCUS),--focus '$(INTEGRATION_FOCUS)') ./tests/integration

.PHONY: ginkgo
ginkgo: $(GINKGO) ## Build Ginkgo's CLI (the version go.mod requires) into bin/ if necessary.
$(GINKGO): go.mod go.sum | $(LOCALBIN)
	@start=$$(date +%s); go build -o $@ github.com/onsi/ginkgo/v2/ginkgo && echo "Built $(notdir $@) in $$(( $$(date +%s) - start ))s"

# Debian's prometheus package gives promtool (rule tests) and prometheus (it scrapes the operator
# in the end-to-end tests); prometheus-alertmanager gives Alertmanager (the end-to-end tests route
# the alerts through it) and amtool. The system packages the tests need: installed when missing.
.PHONY: system-packages
system-packages: ## Install the Debian packages the tests need (prometheus, prometheus-alertmanager) if missing; needs root.
	@if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null || ! command -v prometheus-alertmanager >/dev/null || ! command -v amtool >/dev/null; then \
		if [ "$$(id -u)" -ne 0 ]; then echo "The tests need Debian's prometheus and prometheus-alertmanager packages: run 'sudo apt-get install prometheus prometheus-alertmanager'" >&2; exit 1; fi; \
		$(APT_GET) update -q && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -q --no-install-recommends prometheus prometheus-alertmanager </dev/null; \
	fi

# apt-get, waiting up to 10 minutes for the package lock another apt-get (an unattended upgrade,
# another make target) holds, instead of failing at once.
APT_GET := apt-get -o DPkg::Lock::Timeout=600

# The real node's Debian packages (hack/cluster/realnode.sh): containerd, runc, the CNI plugins,
# the registry (distribution), iptables and iproute2; installed when one is missing.
REAL_NODE_PACKAGES := containerd runc containernetworking-plugins docker-registry iptables iproute2

.PHONY: real-node-images
real-node-images: ## Build the images of the local cluster's real node (REAL_NODE_IMAGES) if their inputs changed.
	$(MAKE) images IMAGES="$(REAL_NODE_IMAGES)"

.PHONY: real-node-packages
real-node-packages: ## Install the Debian packages of the local cluster's real node if missing; needs root.
	@missing=""; for p in $(REAL_NODE_PACKAGES); do \
		dpkg-query -W -f '$${Status}' "$$p" 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" -ne 0 ]; then echo "The real node needs Debian's$$missing: run 'sudo apt-get install$$missing'" >&2; exit 1; fi; \
		$(APT_GET) update -q && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -q --no-install-recommends $$missing </dev/null; \
	fi

# The end-to-end suite (tests/e2e, build tag e2e) brings up a local cluster of its own (state in
# .state/e2e-cluster, kept between runs), applies config/local, runs bin/manager as a separate
# process with a token of its ServiceAccount, and stops everything at the end, on Ginkgo's timeout
# too. The specs run on E2E_PROCS Ginkgo processes: the first starts the cluster, the operator and
# Prometheus and shares them; the specs mostly wait on the operator's timers and the cluster, and
# those that stop the operator or query Prometheus are Serial (the first process runs them last).
E2E_GINKGO_TIMEOUT ?= 18m
E2E_PROCS ?= 3
# E2E_FOCUS runs only the specs whose description matches this regular expression.
E2E_FOCUS ?=

.PHONY: test-e2e
test-e2e: system-packages $(CLUSTER_BINARIES) $(KUSTOMIZE) $(GINKGO) build ## Run the end-to-end tests against a local cluster (hack/cluster) and the built manager, on E2E_PROCS parallel Ginkgo processes.
	go vet -tags e2e ./tests/e2e/
	$(CLUSTER_ENV) KUSTOMIZE=$(KUSTOMIZE) MANAGER=$(LOCALBIN)/manager KUBECTL_OAAT=$(LOCALBIN)/kubectl-oaat \
		$(GINKGO) --tags e2e --procs=$(E2E_PROCS) -v --timeout $(E2E_GINKGO_TIMEOUT) \
		$(if $(E2E_FOCUS),--focus '$(E2E_FOCUS)') ./tests/e2e

# The floor suite: the e2e specs labelled floor (a group, a lock, an eviction, a calendar
# schedule, items from claims) on a local cluster of the oldest Kubernetes the CSV claims
# (KUBE_VERSION_FLOOR: its kube-apiserver, kube-controller-manager and kube-scheduler, with kwok's
# nodes, as a 1.36 kubelet may not run against a 1.30 API server), the suite checking that the
# API server reports that version; then the docs' YAML (CRDs, admission) on that kube-apiserver.
# Its cluster is its own (.state/floor-cluster, ports apart), so make test runs it beside
# test-olm-catalog, which mostly waits.
.PHONY: test-floor
test-floor: system-packages $(CLUSTER_BINARIES) $(KUBE_APISERVER_FLOOR) $(KUBE_CONTROLLER_MANAGER_FLOOR) $(KUBE_SCHEDULER_FLOOR) $(KUSTOMIZE) $(GINKGO) build ## Run the end-to-end specs labelled floor on a local cluster of the oldest supported Kubernetes (KUBE_VERSION_FLOOR), then the docs' YAML on its kube-apiserver.
	go vet -tags e2e ./tests/e2e/
	$(CLUSTER_ENV) KUBE_APISERVER=$(KUBE_APISERVER_FLOOR) KUBE_CONTROLLER_MANAGER=$(KUBE_CONTROLLER_MANAGER_FLOOR) KUBE_SCHEDULER=$(KUBE_SCHEDULER_FLOOR) \
		E2E_CLUSTER=floor-cluster E2E_KUBE_VERSION=$(KUBE_VERSION_FLOOR) KUSTOMIZE=$(KUSTOMIZE) MANAGER=$(LOCALBIN)/manager KUBECTL_OAAT=$(LOCALBIN)/kubectl-oaat \
		$(GINKGO) --tags e2e --procs=$(E2E_PROCS) -v --timeout $(E2E_GINKGO_TIMEOUT) --label-filter floor ./tests/e2e
	TEST_ASSET_KUBE_APISERVER=$(KUBE_APISERVER_FLOOR) TEST_ASSET_ETCD=$(ETCD) TEST_ASSET_KUBECTL=$(KUBECTL_BIN) \
		go test ./tests/docs/ -count=1 -run 'TestYAMLBlocks'

# docs-transcripts runs the e2e spec of the documentation's transcripts with WRITE_TRANSCRIPTS=1: the
# console blocks marked <!-- transcript: NAME --> get what their commands print on the local
# cluster (tests/e2e/transcripts_test.go). Without it, the same spec (in make test-e2e) fails when
# a block no longer matches.
.PHONY: docs-transcripts
docs-transcripts: $(CLUSTER_BINARIES) $(KUSTOMIZE) build ## Run the documentation's console transcripts on a local cluster and write their outputs into the pages (README.md, docs/).
	WRITE_TRANSCRIPTS=1 $(MAKE) test-e2e E2E_FOCUS='documentation.s transcripts'

# The real-node suite (tests/realnode, build tag realnode) brings up a local cluster of its own with
# the real node (.state/realnode-cluster, kept between runs; hack/cluster/realnode.sh), deploys
# config/default from the operator image as `make deploy` does, and runs item pods in real
# containers. Needs root, and the machine's one real node.
REALNODE_TIMEOUT ?= 20m
REALNODE_GINKGO_TIMEOUT ?= 18m
REALNODE_FOCUS ?=

# docs-transcripts-realnode writes the console blocks of docs/pvc-backup.md, which need the real
# node's volumes and containers, as docs-transcripts does those of the kwok cluster
# (tests/realnode/transcripts_test.go). Without it, the same spec (in make test-realnode) fails when
# a block no longer matches. Root, and the machine's one real node.
.PHONY: docs-transcripts-realnode
docs-transcripts-realnode: ## Run docs/pvc-backup.md's console transcripts on the local cluster's real node and write their outputs into the page.
	WRITE_TRANSCRIPTS=1 $(MAKE) test-realnode REALNODE_FOCUS='pvc-backup.md.s transcripts'

# The real-node suite installs the operator and the plugin from a release's files, as a user does
# (docs/install.md), and the OLM catalog suite checks that its pods run the release's images: each
# target runs make release into TEST_RELEASE first (from the tree as it is; the release's images
# are the layouts make images built, which the cluster pushes into the node's registry).
TEST_RELEASE ?= $(LOCALBIN)/test-release

.PHONY: test-realnode
test-realnode: system-packages $(CLUSTER_BINARIES) $(REAL_NODE_BINARIES) real-node-packages real-node-images $(KUSTOMIZE) $(KREW) $(HELM) ## Run the end-to-end tests on the local cluster's real node (the operator and the plugin installed from a release's files, real item pods).
	go vet -tags realnode ./tests/realnode/
	$(MAKE) release DIST=$(TEST_RELEASE) RELEASE_ALLOW_DIRTY=1
	$(MAKE) previous-release
	prom_op=github.com/prometheus-operator/prometheus-operator@$(PROMETHEUS_OPERATOR_CRDS_VERSION); \
	prom_op_dir="$$(cd / && GOWORK=off go mod download $$prom_op && GOWORK=off go list -m -f '{{.Dir}}' $$prom_op)"; \
	$(CLUSTER_ENV) $(REAL_NODE_ENV) KUSTOMIZE=$(KUSTOMIZE) KREW=$(KREW) HELM=$(HELM) PREVIOUS_COMMIT=$(PREVIOUS_COMMIT) VERSION=$(VERSION) RELEASE_DIST=$(TEST_RELEASE) \
		PREVIOUS_VERSION=$(PREVIOUS_VERSION) PREVIOUS_DIST=$(PREVIOUS_DIST) MONITORING_CRDS_DIR="$$prom_op_dir/example/prometheus-operator-crd" \
		go test -tags realnode ./tests/realnode/ -count=1 -v -timeout $(REALNODE_TIMEOUT) -ginkgo.v -ginkgo.timeout $(REALNODE_GINKGO_TIMEOUT) \
		$(if $(REALNODE_FOCUS),-ginkgo.focus '$(REALNODE_FOCUS)')

# The benchmark and the chaos run (tests/perf) each start a local cluster of their own
# (.state/perf-bench, .state/perf-chaos, purged at each start), run bin/manager as separate
# processes and write their numbers to docs/performance.md. Their knobs default to the scale of
# issue 8; e.g. `make bench BENCH_GROUPS=20` or `make chaos CHAOS_MINUTES=1` for a quick run.
# BENCH_PHASES (cronjob,latency,scale,failover,curve,locks,handoff,jitter by default) runs some
# phases of the benchmark only, e.g. `make bench BENCH_PHASES=locks,jitter`; such a run writes a
# section of its own.
# The manager runs without a memory limit unless MANAGER_GOMEMLIMIT gives it the Deployment's,
# e.g. `make bench BENCH_PHASES=scale MANAGER_GOMEMLIMIT=200MiB`; the report's header says which.
BENCH_GROUPS ?= 1000
BENCH_ITEMS ?= 10
CHAOS_MINUTES ?= 10
CHAOS_GROUPS ?= 40
PERF_ENV = $(CLUSTER_ENV) KUSTOMIZE=$(KUSTOMIZE) MANAGER=$(LOCALBIN)/manager

.PHONY: bench
bench: $(CLUSTER_BINARIES) $(KUSTOMIZE) build ## Measure reaction, precision, scale (BENCH_GROUPS x BENCH_ITEMS), restart, failover, the scale curve (BENCH_SCALE), the CronJob baseline, a shared lock's writes and the starts at one schedule tick (BENCH_PHASES selects) on a local cluster; writes docs/performance.md.
	$(PERF_ENV) BENCH_GROUPS=$(BENCH_GROUPS) BENCH_ITEMS=$(BENCH_ITEMS) go run ./tests/perf/bench

.PHONY: chaos
chaos: $(CLUSTER_BINARIES) $(KUSTOMIZE) build ## Two leader-elected managers under faults for CHAOS_MINUTES; checks one-at-a-time, outcomes recorded once, starvation, metrics; writes docs/performance.md.
	$(PERF_ENV) CHAOS_MINUTES=$(CHAOS_MINUTES) CHAOS_GROUPS=$(CHAOS_GROUPS) go run ./tests/perf/chaos

# The OLM install test (tests/olminstall, build tag olminstall) installs bundle/ as a user of OLM
# does, on a local cluster of its own (.state/olm-cluster, purged at each start): OLM's CRDs (of the
# github.com/operator-framework/api that hack/tools/olm builds OLM with) and the Prometheus
# Operator's servicemonitors and prometheusrules CRDs, olm and catalog run outside the cluster, a
# catalog rendered from bundle/ served by opm serve, then a Subscription per install mode; bin/manager
# then runs with the token of the ServiceAccount OLM created. No tools module requires the
# Prometheus Operator (only its CRD files are used): its version is pinned here.
PROMETHEUS_OPERATOR_CRDS_VERSION ?= v0.85.0
OLM_INSTALL_TIMEOUT ?= 15m
OLM_INSTALL_GINKGO_TIMEOUT ?= 14m

.PHONY: test-olm-install
test-olm-install: $(CLUSTER_BINARIES) $(OLM) $(CATALOG_OPERATOR) $(OPM) $(KUSTOMIZE) build ## Install the bundle through OLM (Subscription, each install mode) on a local cluster and run the manager with the CSV's permissions.
	go vet -tags olminstall ./tests/olminstall/
	olm_api=github.com/operator-framework/api; prom_op=github.com/prometheus-operator/prometheus-operator@$(PROMETHEUS_OPERATOR_CRDS_VERSION); \
	olm_api_dir="$$(cd $(TOOLS_DIR)/olm && GOWORK=off go mod download $$olm_api && GOWORK=off go list -m -f '{{.Dir}}' $$olm_api)"; \
	prom_op_dir="$$(cd / && GOWORK=off go mod download $$prom_op && GOWORK=off go list -m -f '{{.Dir}}' $$prom_op)"; \
	$(CLUSTER_ENV) OLM=$(OLM) CATALOG_OPERATOR=$(CATALOG_OPERATOR) OPM=$(OPM) MANAGER=$(LOCALBIN)/manager \
		OLM_CRDS_DIR="$$olm_api_dir/crds" MONITORING_CRDS_DIR="$$prom_op_dir/example/prometheus-operator-crd" \
		go test -tags olminstall ./tests/olminstall/ -count=1 -v -timeout $(OLM_INSTALL_TIMEOUT) -ginkgo.v -ginkgo.timeout $(OLM_INSTALL_GINKGO_TIMEOUT)

.PHONY: test-unit
test-unit: ## Run the unit tests only (internal/, api/), without a control plane.
	go test ./internal/... ./api/...

# tests/admission is also part of `go test ./...` in the test target.
.PHONY: test-admission
test-admission: $(KUBE_APISERVER) $(KUBE_APISERVER_FLOOR) $(ETCD) $(KUBECTL_BIN) ## Check the CRDs' admission rules on the newest and the oldest supported kube-apiserver (envtest, dry-run): the cron corpus against the operator's parser, every time zone, a table of groups.
	$(ENVTEST_ENV) go test ./tests/admission/ -count=1 -v -run TestAdmission

# tests/docs is also part of `go test ./...` in the test target.
.PHONY: test-docs
test-docs: $(KUBE_APISERVER) $(ETCD) $(KUBECTL_BIN) ## Check the docs (README.md, docs/): their YAML against the API server (envtest, dry-run), the make targets, kubectl oaat commands and links they name.
	$(ENVTEST_ENV) go test ./tests/docs/ -count=1

# The OLM catalog test (tests/olmcatalog, build tag olmcatalog) installs the operator from its
# catalog image as a user's cluster does, on a local cluster of its own with a real node
# (.state/olmcatalog-cluster, purged at each start; root, one real node per machine): kube-proxy
# and CoreDNS (hack/cluster/services.sh), OLM's CRDs and manifests of the pinned
# operator-lifecycle-manager (olm and catalog operators as Deployments from the OLM image), a
# CatalogSource with the catalog image, a Subscription per install mode, real item pods, Prometheus
# scraping the run metrics through the bundle's metrics Service; then the uninstall. Then the
# operator-sdk paths as a user types them: `operator-sdk run bundle` of the bundle image, a group,
# `operator-sdk cleanup`; `operator-sdk scorecard ./bundle`, its tests as pods. Every image comes
# from make images, pulled by its public name through the node's registry (operator-sdk's own
# pulls through an HTTPS proxy in front of it: tests/support/registryproxy.go).
# OLM_CATALOG_KEEP_CLUSTER=1 leaves the cluster up.
OLM_CATALOG_TIMEOUT ?= 60m
OLM_CATALOG_GINKGO_TIMEOUT ?= 58m
# More ginkgo flags, e.g. OLM_CATALOG_GINKGO_ARGS=-ginkgo.focus=scorecard.
OLM_CATALOG_GINKGO_ARGS ?=

# docs-transcripts-olm writes the console blocks of docs/olm.md, which need OLM (kubectl get csv,
# operator-sdk run bundle and cleanup, scorecard), as docs-transcripts does those of the kwok
# cluster (tests/olmcatalog, checkOLMTranscripts); each spec writes the blocks it makes, so a focused
# run (OLM_CATALOG_GINKGO_ARGS=-ginkgo.focus=operator-sdk) writes some. Without it, the same specs
# (in make test-olm-catalog) fail when a block no longer matches. Root, and the machine's one real node.
.PHONY: docs-transcripts-olm
docs-transcripts-olm: ## Run docs/olm.md's console transcripts on the OLM cluster of test-olm-catalog and write their outputs into the page.
	WRITE_TRANSCRIPTS=1 $(MAKE) test-olm-catalog

.PHONY: test-olm-catalog
test-olm-catalog: $(CLUSTER_BINARIES) $(REAL_NODE_BINARIES) $(OPM) $(OPERATOR_SDK) system-packages real-node-packages images ## Install from the catalog image with OLM in the cluster on the real node (each install mode, real item pods, Prometheus through the metrics Service), uninstall; operator-sdk run bundle, cleanup and scorecard.
	go vet -tags olmcatalog ./tests/olmcatalog/
	$(MAKE) release DIST=$(TEST_RELEASE) RELEASE_ALLOW_DIRTY=1
	olm=github.com/operator-framework/operator-lifecycle-manager; prom_op=github.com/prometheus-operator/prometheus-operator@$(PROMETHEUS_OPERATOR_CRDS_VERSION); \
	olm_dir="$$(cd $(TOOLS_DIR)/olm && GOWORK=off go mod download $$olm && GOWORK=off go list -m -f '{{.Dir}}' $$olm)"; \
	prom_op_dir="$$(cd / && GOWORK=off go mod download $$prom_op && GOWORK=off go list -m -f '{{.Dir}}' $$prom_op)"; \
	$(CLUSTER_ENV) $(REAL_NODE_ENV) OAAT_CLUSTER_REAL_NODE=1 OPM=$(OPM) OPERATOR_SDK=$(OPERATOR_SDK) \
		OLM_DEPLOY_DIR="$$olm_dir/deploy" MONITORING_CRDS_DIR="$$prom_op_dir/example/prometheus-operator-crd" \
		IMG=$(IMG) BUNDLE_IMG=$(BUNDLE_IMG) CATALOG_IMG=$(CATALOG_IMG) OLM_IMG=$(OLM_IMG) RELEASE_DIST=$(TEST_RELEASE) \
		PREVIOUS_IMG=$(PREVIOUS_IMG) PREVIOUS_BUNDLE_IMG=$(PREVIOUS_BUNDLE_IMG) PREVIOUS_CATALOG_IMG=$(PREVIOUS_CATALOG_IMG) \
		go test -tags olmcatalog ./tests/olmcatalog/ -count=1 -v -timeout $(OLM_CATALOG_TIMEOUT) -ginkgo.v -ginkgo.timeout $(OLM_CATALOG_GINKGO_TIMEOUT) $(OLM_CATALOG_GINKGO_ARGS)

# The OLM packaging checks, without a cluster: the custom scorecard tests' own tests
# (tests/scorecard, a module of its own), then tests/olm (build tag olm, so `go test ./...` skips
# it): bundle validation with the operatorframework suite (no warning allowed), every scorecard
# test of the bundle run as scorecard runs it, the catalog, and the multiarch validation of the
# operator image (make images) pushed into a throw-away registry. Root is needed: the scorecard
# tests read the bundle at /bundle, a bind mount in a private mount namespace.
SCORECARD_TEST_IMG := quay.io/operator-framework/scorecard-test:$(OPERATOR_SDK_VERSION)
OLM_TEST_ENV = OPERATOR_SDK=$(OPERATOR_SDK) SCORECARD_TEST=$(SCORECARD_TEST) OAAT_SCORECARD_TESTS=$(OAAT_SCORECARD_TESTS) \
	OPM=$(OPM) BUNDLE_IMG=$(BUNDLE_IMG) SCORECARD_IMG=$(SCORECARD_IMG) SCORECARD_TEST_IMG=$(SCORECARD_TEST_IMG) IMG=$(IMG)

.PHONY: test-olm
test-olm: $(OPERATOR_SDK) $(SCORECARD_TEST) $(OPM) oaat-scorecard-tests ## Check the bundle, its scorecard tests (run locally, as root) and the catalog.
	cd tests/scorecard && GOWORK=off go vet ./... && GOWORK=off go test ./... -count=1
	go vet -tags olm ./tests/olm/
	$(MAKE) images IMAGES=operator
	$(OLM_TEST_ENV) go test -tags olm ./tests/olm/ -count=1 -v

.PHONY: verify
verify: manifests generate fmt api-docs ## Regenerate code, manifests and the API reference, fail if they differ from what is committed or are untracked; then the bundle and the catalog (bundle-verify); then both linters (lint, lint-api).
	hack/verify-clean-tree.sh
	$(MAKE) bundle-verify
	$(MAKE) lint lint-api

# The build tags of the test packages that `go build ./...` skips: the linters type-check them too.
LINT_BUILD_TAGS ?= e2e,olm,olminstall,olmcatalog,realnode,release

# The API reference (docs/reference/api.md) is generated from the Go types of api/v1alpha1 by
# crd-ref-docs (hack/crd-ref-docs.yaml): every field with its godoc, type, default and validation;
# the labels, annotations, conditions and reasons (docs/reference/conventions.md) from
# api/v1alpha1/conventions.go, the manager's flags and environment (docs/reference/manager.md)
# from its -h, and the metrics and alerts (docs/reference/metrics.md) from a scrape of the
# collectors of internal/metrics and from the PrometheusRule config/prometheus/alerts.yaml, by
# hack/docgen.
.PHONY: api-docs
api-docs: $(CRD_REF_DOCS) ## Write the reference pages (docs/reference/: api.md, conventions.md, manager.md, metrics.md) from the code.
	$(CRD_REF_DOCS) --source-path=./api --config=hack/crd-ref-docs.yaml --renderer=markdown \
		--output-path=docs/reference/api.md --log-level=ERROR
	go run ./hack/docgen conventions api/v1alpha1/conventions.go docs/reference/conventions.md
	go run ./cmd -h 2>&1 | go run ./hack/docgen manager docs/reference/manager.md
	go run ./hack/docgen metrics config/prometheus/alerts.yaml docs/reference/metrics.md

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (.golangci.yml) on the module, build-tagged test packages included, and on tests/scorecard.
	$(GOLANGCI_LINT) run --build-tags $(LINT_BUILD_TAGS) ./...
	cd tests/scorecard && GOWORK=off $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...

.PHONY: lint-api
lint-api: $(KUBE_API_LINTER) ## Run the Kube API Linter (.golangci-kal.yml) on the API types in api/.
	$(KUBE_API_LINTER) run --config .golangci-kal.yml ./api/...

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the manager and the kubectl-oaat plugin into bin/.
	go build -ldflags "$(VERSION_LDFLAGS)" -o $(LOCALBIN)/manager ./cmd
	go build -ldflags "$(VERSION_LDFLAGS)" -o $(LOCALBIN)/kubectl-oaat ./cmd/kubectl-oaat

# The kubectl oaat plugin for krew: KREW_PLATFORMS' archives, bin/krew/kubectl-oaat_vVERSION_OS_ARCH.tar.gz
# (the static binary built as every shipped binary is, RELEASE_GO_FLAGS, and LICENSE once the
# repository has one; their files dated SOURCE_DATE_EPOCH), and their krew manifest,
# bin/krew/oaat.yaml, from the template hack/krew/oaat.yaml (hack/krew fills in the version and
# each archive's sha256, and checks the result). Its URIs name KREW_URL, where a release would
# attach the archives; releases attach none yet, so install with --archive (docs/kubectl-plugin.md).
KREW_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
KREW_URL ?= https://github.com/oaat-io/oaat-operator/releases/download/v$(VERSION)
KREW_DIR ?= $(LOCALBIN)/krew

.PHONY: krew-archives
krew-archives: ## Build the kubectl-oaat archives of KREW_PLATFORMS into bin/krew/ (KREW_DIR), without their manifest.
	rm -rf $(KREW_DIR) && mkdir -p $(KREW_DIR)
	set -e; for p in $(KREW_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; dir=$(KREW_DIR)/kubectl-oaat_v$(VERSION)_$${os}_$${arch}; \
		mkdir -p $$dir; \
		echo "Building kubectl-oaat for $$os/$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build $(RELEASE_GO_FLAGS) -o $$dir/kubectl-oaat ./cmd/kubectl-oaat; \
		$(if $(wildcard LICENSE),cp LICENSE $$dir/;) \
		tar -C $$dir --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(SOURCE_DATE_EPOCH) -cf - kubectl-oaat $(if $(wildcard LICENSE),LICENSE) | gzip -n > $$dir.tar.gz; \
	done

.PHONY: krew-manifest
krew-manifest: krew-archives ## Build the kubectl-oaat archives of KREW_PLATFORMS and their krew manifest into bin/krew/.
	go run ./hack/krew -version $(VERSION) -url $(KREW_URL) -dir $(KREW_DIR) -platforms "$(KREW_PLATFORMS)" \
		-o $(KREW_DIR)/oaat.yaml hack/krew/oaat.yaml
	cd $(KREW_DIR) && sha256sum *.tar.gz

.PHONY: run
run: manifests generate fmt vet ## Run a controller from your host.
	go run ./cmd

# If you wish to build the manager image targeting other platforms you can use the --platform flag.
# (i.e. docker build --platform linux/arm64). However, you must enable docker buildKit for it.
# More info: https://docs.docker.com/develop/develop-images/build_enhancements/
.PHONY: docker-build
docker-build: ## Build docker image with the manager.
	$(CONTAINER_TOOL) build -t ${IMG} .

.PHONY: docker-push
docker-push: ## Push docker image with the manager.
	$(CONTAINER_TOOL) push ${IMG}

.PHONY: build-installer
build-installer: manifests generate $(KUSTOMIZE) ## Generate a consolidated YAML with CRDs and deployment in dist/install.yaml.
	mkdir -p dist
	cd config/manager && $(KUSTOMIZE) edit set image controller=${IMG}
	$(KUSTOMIZE) build config/default > dist/install.yaml

##@ Release

# make release VERSION=X.Y.Z [REGISTRY=host:port] writes a release into DIST (docs/development.md#releasing):
# from a clean tree (RELEASE_ALLOW_DIRTY=1 builds from a dirty one, for development only), the
# operator, bundle and catalog images as OCI archives, install.yaml and install-namespace.yaml
# naming the operator image by digest, the plugin's archives and krew manifest, the SBOMs, the
# release notes (CHANGELOG.md's section of VERSION), SHA256SUMS and the signatures
# (RELEASE_GPG_KEY, or a throw-away key); with REGISTRY, the images are pushed there, their digests
# kept. The images are those of make images (the same layouts under bin/images, built once), so
# every suite that builds images runs the release's.
DIST ?= $(CURDIR)/dist
RELEASE_IMAGES := operator bundle opm catalog
RELEASE_ENV = VERSION=$(VERSION) IMG=$(IMG) BUNDLE_IMG=$(BUNDLE_IMG) CATALOG_IMG=$(CATALOG_IMG) IMAGES_DIR=$(IMAGES_DIR) \
	KREW_DIR=$(KREW_DIR) DIST=$(DIST) KUSTOMIZE=$(KUSTOMIZE) CYCLONEDX_GOMOD=$(CYCLONEDX_GOMOD) \
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) REGISTRY=$(REGISTRY) RELEASE_GPG_KEY=$(RELEASE_GPG_KEY)

.PHONY: release
release: $(KUSTOMIZE) $(CYCLONEDX_GOMOD) ## Write the release of VERSION into dist/ (images as OCI archives, pinned install files, plugin archives, krew manifest, SBOMs, notes, SHA256SUMS, signatures); push the images to REGISTRY if set.
	VERSION=$(VERSION) hack/release/release.sh preflight
	$(MAKE) images IMAGES="$(RELEASE_IMAGES)" REVISION=$(REVISION) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH)
	$(MAKE) krew-manifest REVISION=$(REVISION) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH)
	$(RELEASE_ENV) hack/release/release.sh assemble

# The previous release's install files and Helm chart, packaged by this tree's tooling from
# PREVIOUS_COMMIT's tree and its operator image (release.sh previous), dated that commit: what
# test-realnode's upgrades by install.yaml and by Helm start from.
PREVIOUS_DIST ?= $(LOCALBIN)/test-previous-release
.PHONY: previous-release
previous-release: $(KUSTOMIZE) ## Write the previous release's install files and Helm chart (PREVIOUS_COMMIT, packaged by this tree's tooling) into PREVIOUS_DIST.
	$(MAKE) images IMAGES=previous-operator
	PREVIOUS_VERSION=$(PREVIOUS_VERSION) PREVIOUS_COMMIT=$(PREVIOUS_COMMIT) PREVIOUS_IMG=$(PREVIOUS_IMG) \
		PREVIOUS_CHART_ABSENT="$(PREVIOUS_CHART_ABSENT)" IMAGES_DIR=$(IMAGES_DIR) DIST=$(PREVIOUS_DIST) KUSTOMIZE=$(KUSTOMIZE) \
		SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct $(PREVIOUS_COMMIT)) hack/release/release.sh previous

# The release test (tests/release, build tag release) runs make release once into a temporary
# directory, pushing to a throw-away registry, and checks what it wrote; with RELEASE_REPRODUCE=1
# it also assembles a second release and rebuilds the manager in an empty Go cache, and compares.
.PHONY: test-release
test-release: image-packages $(HELM) ## Run make release into a temporary directory and a throw-away registry and check the release (digests, sums, SBOMs, signatures, pinned images); RELEASE_REPRODUCE=1 also checks that it is reproducible.
	go vet -tags release ./tests/release/
	RELEASE_REPRODUCE=$(RELEASE_REPRODUCE) VERSION=$(VERSION) HELM=$(HELM) go test -tags release ./tests/release/ -count=1 -v -timeout 30m

##@ Local cluster


# What cluster.sh needs for a real node beyond CLUSTER_ENV: the sandbox image's public name, and the
# images (make images) it pushes into the node's registry at each up.
REAL_NODE_ENV = OAAT_PAUSE_IMAGE=$(PAUSE_IMG) OAAT_COREDNS_IMAGE=$(COREDNS_IMG) IMAGES_DIR=$(IMAGES_DIR)

.PHONY: cluster-up
cluster-up: $(CLUSTER_UP_PREREQUISITES) ## Start the local cluster (etcd, API server, controllers, kwok nodes; a real node with OAAT_CLUSTER_REAL_NODE=1) if not up; prints the kubeconfig path last.
	$(CLUSTER_ENV) $(if $(filter 1,$(OAAT_CLUSTER_REAL_NODE)),$(REAL_NODE_ENV)) hack/cluster/cluster.sh up

.PHONY: cluster-down
cluster-down: $(PROCESSES) ## Stop the local cluster; with PURGE=1 also delete its state directory.
	$(CLUSTER_ENV) hack/cluster/cluster.sh down $(if $(PURGE),--purge)

.PHONY: cluster-status
cluster-status: $(PROCESSES) ## Show the local cluster's processes and kubeconfig; fails unless all run.
	$(CLUSTER_ENV) hack/cluster/cluster.sh status

.PHONY: real-node-smoke
real-node-smoke: $(CLUSTER_BINARIES) $(REAL_NODE_BINARIES) real-node-packages real-node-images ## Check the local cluster's real node (a busybox pod, its exit code and log), then that down leaves nothing behind.
	$(CLUSTER_ENV) $(REAL_NODE_ENV) hack/cluster/realnode-smoke.sh

.PHONY: cluster-smoke
cluster-smoke: $(CLUSTER_BINARIES) ## Check the local cluster end to end (in its own state directory), then stop it.
	$(CLUSTER_ENV) hack/cluster/smoke.sh

##@ Demo

# The demo runs the manager on this machine as its ServiceAccount (hack/local-operator), not
# in a Deployment (make deploy does that), and the samples' item pods on the cluster's real node:
# the images it needs are the node's own (pause, coredns) and the samples' (busybox, and restic
# for docs/pvc-backup.md's restic sample, which a user of the demo may apply), not the operator's. Its binaries are built with go build alone, not through `build`, which also
# regenerates code and manifests and formats the tree.
DEMO_IMAGES := $(REAL_NODE_CLUSTER_IMAGES) busybox restic
MANAGER_BIN = $(LOCALBIN)/manager
KUBECTL_OAAT_BIN = $(LOCALBIN)/kubectl-oaat
LOCAL_OPERATOR_BIN = $(LOCALBIN)/local-operator
DEMO_ENV = $(CLUSTER_ENV) $(REAL_NODE_ENV) KUSTOMIZE=$(KUSTOMIZE) MANAGER=$(MANAGER_BIN) KUBECTL_OAAT=$(KUBECTL_OAAT_BIN) \
	LOCAL_OPERATOR=$(LOCAL_OPERATOR_BIN)

.PHONY: demo
demo: $(CLUSTER_BINARIES) $(REAL_NODE_BINARIES) real-node-packages $(KUSTOMIZE) ## Start the local cluster with its real node and the operator, run config/samples in namespace oaat-demo, watch it (DEMO_SECONDS=N: N seconds, then check).
	$(MAKE) images IMAGES="$(DEMO_IMAGES)"
	go build -ldflags "$(VERSION_LDFLAGS)" -o $(MANAGER_BIN) ./cmd
	go build -ldflags "$(VERSION_LDFLAGS)" -o $(KUBECTL_OAAT_BIN) ./cmd/kubectl-oaat
	go build -o $(LOCAL_OPERATOR_BIN) ./hack/local-operator
	$(DEMO_ENV) hack/demo.sh up

.PHONY: demo-down
demo-down: $(PROCESSES) ## Stop the demo's operator, then the local cluster; with PURGE=1 also delete their state.
	go build -o $(LOCAL_OPERATOR_BIN) ./hack/local-operator
	$(DEMO_ENV) hack/demo.sh down $(if $(PURGE),--purge)

##@ Deployment

ifndef ignore-not-found
  ignore-not-found = false
endif

# The CRDs embed a whole pod template: too large for client-side apply's last-applied annotation,
# hence --server-side.
.PHONY: install
install: manifests $(KUSTOMIZE) $(filter $(LOCALBIN)/%,$(KUBECTL)) ## Install CRDs into the K8s cluster specified in ~/.kube/config.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests $(KUSTOMIZE) $(filter $(LOCALBIN)/%,$(KUBECTL)) ## Uninstall CRDs from the K8s cluster specified in ~/.kube/config. Call with ignore-not-found=true to ignore resource not found errors during deletion.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: deploy
deploy: manifests $(KUSTOMIZE) $(filter $(LOCALBIN)/%,$(KUBECTL)) ## Deploy controller to the K8s cluster specified in ~/.kube/config.
	cd config/manager && $(KUSTOMIZE) edit set image controller=${IMG}
	$(KUSTOMIZE) build config/default | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: $(KUSTOMIZE) $(filter $(LOCALBIN)/%,$(KUBECTL)) ## Undeploy controller from the K8s cluster specified in ~/.kube/config. Call with ignore-not-found=true to ignore resource not found errors during deletion.
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

##@ Bundle and catalog

# The OLM package: the bundle's CSV is $(PACKAGE_NAME).v$(VERSION).
PACKAGE_NAME := oaat-operator
# The channels of the catalog: CHANNELS (comma-separated) if set, else alpha, the channel that
# operator-sdk generate bundle writes by default; the default channel is DEFAULT_CHANNEL if set,
# else the first of them.
comma := ,
CATALOG_CHANNELS = $(subst $(comma), ,$(or $(CHANNELS),alpha))
CATALOG_DEFAULT_CHANNEL = $(or $(DEFAULT_CHANNEL),$(firstword $(CATALOG_CHANNELS)))
CATALOG_DIR := catalog/$(PACKAGE_NAME)
# The base image of the catalog image: opm of the version the catalog is rendered and checked with.
OPM_IMAGE ?= quay.io/operator-framework/opm:$(OPM_VERSION)

# The manager's objects carry the label app.kubernetes.io/version=$(VERSION) (config/manager's
# kustomization, so the CSV's Deployment too): kubectl oaat version reads the server's version
# there, as an image pinned by digest has no tag to read.
.PHONY: bundle
bundle: manifests $(KUSTOMIZE) $(OPERATOR_SDK) ## Generate bundle manifests and metadata, then validate generated files.
	$(OPERATOR_SDK) generate kustomize manifests -q
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG) \
		&& $(KUSTOMIZE) edit add label -f --without-selector --include-templates app.kubernetes.io/version:$(VERSION)
	$(KUSTOMIZE) build config/manifests | $(OPERATOR_SDK) generate bundle $(BUNDLE_GEN_FLAGS)
	$(OPERATOR_SDK) bundle validate ./bundle

.PHONY: bundle-build
bundle-build: ## Build the bundle image.
	$(CONTAINER_TOOL) build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image.
	$(MAKE) docker-push IMG=$(BUNDLE_IMG)

# Regenerating the bundle changes only the CSV's createdAt annotation when nothing else changed:
# that difference alone is undone (the committed file is restored), any other fails. The catalog is
# then rendered again from the committed bundle and must be identical.
BUNDLE_CSV := bundle/manifests/$(PACKAGE_NAME).clusterserviceversion.yaml
GENERATED_BUNDLE_FILES := bundle bundle.Dockerfile config/manifests config/manager/kustomization.yaml
GENERATED_CATALOG_FILES := catalog catalog.Dockerfile

.PHONY: bundle-verify
bundle-verify: ## Regenerate the bundle and the catalog; fail if they differ from what is committed (the CSV's createdAt aside).
	$(MAKE) bundle
	@if ! git diff --quiet -I '^    createdAt: ' -- $(GENERATED_BUNDLE_FILES) \
		|| [ -n "$$(git ls-files --others --exclude-standard -- $(GENERATED_BUNDLE_FILES))" ]; then \
		echo "The bundle is stale: run 'make bundle catalog' and commit the result." >&2; \
		git --no-pager diff --stat -- $(GENERATED_BUNDLE_FILES) >&2; \
		git --no-pager diff -I '^    createdAt: ' -- $(GENERATED_BUNDLE_FILES) | head -n 200 >&2; \
		git ls-files --others --exclude-standard -- $(GENERATED_BUNDLE_FILES) | sed 's/^/untracked: /' >&2; \
		exit 1; \
	fi
	git checkout -- $(BUNDLE_CSV)
	$(MAKE) catalog
	@if ! git diff --quiet -- $(GENERATED_CATALOG_FILES) \
		|| [ -n "$$(git ls-files --others --exclude-standard -- $(GENERATED_CATALOG_FILES))" ]; then \
		echo "The catalog is stale: run 'make bundle catalog' and commit the result." >&2; \
		git --no-pager diff --stat -- $(GENERATED_CATALOG_FILES) >&2; \
		git ls-files --others --exclude-standard -- $(GENERATED_CATALOG_FILES) | sed 's/^/untracked: /' >&2; \
		exit 1; \
	fi
	@echo "The bundle and the catalog are up to date."

# The channel holds the previous release (its olm.bundle entry as its commit's catalog has it) and
# this one, which replaces it and skips any version in between. Only those two: the releases
# before the previous one leave the channel (its commit's catalog may hold them), so every path
# to this release is the one hop the upgrade test runs. The olm.bundle entry is `opm render ./bundle` with the image set to BUNDLE_IMG (which `opm render
# BUNDLE_IMG` would set, but cannot here without a registry) and the bundle image added to its
# relatedImages, as rendering the image does. The catalog is then rendered once more to migrate
# the inline manifests (olm.bundle.object) to olm.csv.metadata: OLM installs from the bundle
# image, and the catalog keeps only what the console shows.
.PHONY: catalog
catalog: $(OPM) ## Write the file-based catalog (catalog/, with the bundle image BUNDLE_IMG) and catalog.Dockerfile, then validate it.
	tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	{ printf -- '---\nschema: olm.package\nname: %s\ndefaultChannel: %s\nicon:\n  base64data: %s\n  mediatype: image/svg+xml\n' \
		$(PACKAGE_NAME) $(CATALOG_DEFAULT_CHANNEL) "$$(base64 -w0 config/manifests/icon.svg)"; \
	  for channel in $(CATALOG_CHANNELS); do \
		printf -- '---\nschema: olm.channel\npackage: %s\nname: %s\nentries:\n- name: %s.v%s\n- name: %s.v%s\n  replaces: %s.v%s\n  skipRange: %s\n' \
			$(PACKAGE_NAME) "$$channel" $(PACKAGE_NAME) $(PREVIOUS_VERSION) $(PACKAGE_NAME) $(VERSION) $(PACKAGE_NAME) $(PREVIOUS_VERSION) "'>=$(PREVIOUS_VERSION) <$(VERSION)'"; \
	  done; \
	  git show $(PREVIOUS_COMMIT):$(CATALOG_DIR)/index.yaml | awk -v name='$(PACKAGE_NAME).v$(PREVIOUS_VERSION)' 'BEGIN { RS = "\n---\n" } /(^|\n)schema: olm.bundle\n/ && index("\n" $$0 "\n", "\nname: " name "\n") { printf "---\n%s\n", $$0; found = 1 } END { if (!found) { print "no olm.bundle " name " in the catalog of $(PREVIOUS_COMMIT)" > "/dev/stderr"; exit 1 } }'; \
	  $(OPM) render ./bundle -o yaml | sed -e 's|^image: ""$$|image: $(BUNDLE_IMG)|' -e 's|^relatedImages:$$|relatedImages:\n- image: $(BUNDLE_IMG)\n  name: ""|'; \
	} > "$$tmp/index.yaml"; \
	mkdir -p $(CATALOG_DIR); \
	$(OPM) render "$$tmp" -o yaml --migrate-level bundle-object-to-csv-metadata > $(CATALOG_DIR)/index.yaml
	rm -f catalog.Dockerfile
	$(OPM) generate dockerfile catalog -i $(OPM_IMAGE) -b $(OPM_IMAGE)
	$(OPM) validate catalog

.PHONY: catalog-build
catalog-build: ## Build the catalog image (catalog.Dockerfile).
	$(CONTAINER_TOOL) build -f catalog.Dockerfile -t $(CATALOG_IMG) .

.PHONY: catalog-push
catalog-push: ## Push the catalog image.
	$(MAKE) docker-push IMG=$(CATALOG_IMG)

# operator-sdk scorecard runs each test of bundle/tests/scorecard/config.yaml as a pod of the
# cluster in KUBECONFIG, with the bundle mounted at /bundle: it needs a cluster that can pull the
# scorecard-test image and SCORECARD_IMG. test-olm runs the same tests on this machine instead.
SCORECARD_BUNDLE ?= ./bundle
# The untar and storage images default to digests of operator-sdk's own images, which no local
# build can produce: the busybox of make images (hack/images) stands in for both.
SCORECARD_FLAGS ?= --wait-time 120s --untar-image docker.io/library/busybox:1.36 --storage-image docker.io/library/busybox:1.36

.PHONY: scorecard
scorecard: $(OPERATOR_SDK) ## Run the scorecard tests of SCORECARD_BUNDLE (./bundle, or a bundle image) as pods in the current cluster.
	$(OPERATOR_SDK) scorecard $(SCORECARD_BUNDLE) $(SCORECARD_FLAGS)

# The custom scorecard tests (tests/scorecard, a module of their own): the program of SCORECARD_IMG.
OAAT_SCORECARD_TESTS := $(LOCALBIN)/oaat-scorecard-tests

.PHONY: oaat-scorecard-tests
oaat-scorecard-tests: | $(LOCALBIN) ## Build the custom scorecard tests (tests/scorecard) into bin/.
	cd tests/scorecard && GOWORK=off CGO_ENABLED=0 go build -o $(OAAT_SCORECARD_TESTS) .

.PHONY: scorecard-image-build
scorecard-image-build: ## Build the image of the custom scorecard tests.
	$(CONTAINER_TOOL) build -t $(SCORECARD_IMG) tests/scorecard

.PHONY: scorecard-image-push
scorecard-image-push: ## Push the image of the custom scorecard tests.
	$(MAKE) docker-push IMG=$(SCORECARD_IMG)

##@ Images

# Images built without a Docker engine (hack/images/README.md): buildah, its storage under
# bin/images, writes each image as an OCI layout bin/images/<name>/, rebuilt only when its inputs
# changed; hack/images/push.sh copies them into a registry under their public names. IMAGES
# selects some of them (e.g. IMAGES="pause busybox"); all by default.
IMAGES ?=
IMAGES_DIR := $(LOCALBIN)/images
# The operator image is one manifest list of these platforms, cross-compiled.
OPERATOR_PLATFORMS ?= linux/amd64 linux/arm64
# The sandbox image: the pause version that Kubernetes KUBE_VERSION builds (build/pause/Makefile's
# TAG; kubeadm's PauseVersion is the same), read from the module source when the images are built
# (computed at the first use only: the eval replaces each variable with its value).
KUBERNETES_SRC = $(eval KUBERNETES_SRC := $$(shell cd $(TOOLS_DIR)/controlplane && GOWORK=off go mod download k8s.io/kubernetes && GOWORK=off go list -m -f '{{.Dir}}' k8s.io/kubernetes))$(KUBERNETES_SRC)
PAUSE_IMG = $(eval PAUSE_IMG := registry.k8s.io/pause:$$(shell sed -n 's/^TAG ?= *//p' $(KUBERNETES_SRC)/build/pause/Makefile))$(PAUSE_IMG)
# busybox: latest (the project's manifests and samples say `busybox`), and 1.36, the busybox of
# operator-sdk's scorecard images (images/scorecard-storage/Dockerfile), which `make scorecard`
# passes as its untar and storage images.
# The registry pod of `operator-sdk run bundle` unpacks the catalog in an init container of Red
# Hat's UBI (DefaultInitImage of the pinned operator-sdk, read from its source at the first use),
# which runs only sh, cat and gzip: the busybox image stands in for it under its name.
OPERATOR_SDK_SRC = $(eval OPERATOR_SDK_SRC := $$(shell cd $(TOOLS_DIR)/operator-sdk && GOWORK=off go mod download github.com/operator-framework/operator-sdk && GOWORK=off go list -m -f '{{.Dir}}' github.com/operator-framework/operator-sdk))$(OPERATOR_SDK_SRC)
RUN_BUNDLE_INIT_IMG = $(eval RUN_BUNDLE_INIT_IMG := $$(shell sed -n 's/^[[:space:]]*DefaultInitImage = "\(.*\)"$$$$/\1/p' $(OPERATOR_SDK_SRC)/internal/olm/fbcutil/util.go))$(RUN_BUNDLE_INIT_IMG)
BUSYBOX_IMAGES = docker.io/library/busybox:latest docker.io/library/busybox:1.36 $(RUN_BUNDLE_INIT_IMG)
# restic: Debian's restic under the name of restic's own image (docs/pvc-backup.md's sample names
# it), tagged with that package's version, which the build checks.
RESTIC_VERSION := 0.14.0
RESTIC_IMG := docker.io/restic/restic:$(RESTIC_VERSION)
# opm: the catalog's base (OPM_IMAGE), and latest, the index image of `operator-sdk run bundle`
# (its --index-image default).
OPM_IMAGES := $(OPM_IMAGE) quay.io/operator-framework/opm:latest
# OLM's image, by the name of its release (the quickstart manifests name it by a digest, which no
# local build can produce), and CoreDNS's, as registry.k8s.io publishes it.
OLM_IMG := quay.io/operator-framework/olm:$(OLM_VERSION)
COREDNS_IMG := registry.k8s.io/coredns/coredns:$(COREDNS_VERSION)
# The previous release's images, built from PREVIOUS_COMMIT (the operator for amd64 only: the
# upgrade test runs it on this machine's node).
PREVIOUS_IMG := $(IMAGE_TAG_BASE):v$(PREVIOUS_VERSION)
PREVIOUS_BUNDLE_IMG := $(IMAGE_TAG_BASE)-bundle:v$(PREVIOUS_VERSION)
PREVIOUS_CATALOG_IMG := $(IMAGE_TAG_BASE)-catalog:v$(PREVIOUS_VERSION)
IMAGES_ENV = IMAGES_DIR=$(IMAGES_DIR) IMG=$(IMG) BUNDLE_IMG=$(BUNDLE_IMG) CATALOG_IMG=$(CATALOG_IMG) \
	SCORECARD_IMG=$(SCORECARD_IMG) SCORECARD_TEST_IMG=$(SCORECARD_TEST_IMG) OPM_IMAGES="$(OPM_IMAGES)" \
	BUSYBOX_IMAGES="$(BUSYBOX_IMAGES)" RESTIC_IMG=$(RESTIC_IMG) PAUSE_IMG=$(PAUSE_IMG) OPERATOR_PLATFORMS="$(OPERATOR_PLATFORMS)" \
	KUBERNETES_SRC=$(KUBERNETES_SRC) OPM=$(OPM) SCORECARD_TEST=$(SCORECARD_TEST) GRPC_HEALTH_PROBE=$(GRPC_HEALTH_PROBE) \
	OLM_IMG=$(OLM_IMG) OLM=$(OLM) CATALOG_OPERATOR=$(CATALOG_OPERATOR) CPB=$(CPB) COPY_CONTENT=$(COPY_CONTENT) \
	COREDNS_IMG=$(COREDNS_IMG) COREDNS=$(COREDNS) PREVIOUS_COMMIT=$(PREVIOUS_COMMIT) \
	PREVIOUS_IMG=$(PREVIOUS_IMG) PREVIOUS_BUNDLE_IMG=$(PREVIOUS_BUNDLE_IMG) PREVIOUS_CATALOG_IMG=$(PREVIOUS_CATALOG_IMG) \
	VERSION=$(VERSION) REVISION=$(REVISION) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) VERSION_LDFLAGS="$(VERSION_LDFLAGS)"

# The tools each image is made of (all of them when IMAGES is empty).
IMAGE_TOOLS = $(if $(filter opm catalog,$(IMAGES))$(if $(IMAGES),,all),$(OPM) $(GRPC_HEALTH_PROBE)) \
	$(if $(filter scorecard-test,$(IMAGES))$(if $(IMAGES),,all),$(SCORECARD_TEST)) \
	$(if $(filter olm,$(IMAGES))$(if $(IMAGES),,all),$(OLM) $(CATALOG_OPERATOR) $(CPB) $(COPY_CONTENT)) \
	$(if $(filter coredns,$(IMAGES))$(if $(IMAGES),,all),$(COREDNS))

.PHONY: images
images: image-packages $(IMAGE_TOOLS) ## Build every image (or IMAGES) into OCI layouts under bin/images, each only when its inputs changed.
	$(IMAGES_ENV) hack/images/build.sh $(IMAGES)

# The Debian packages of the image builds (buildah), of push.sh (skopeo), of the busybox image
# (busybox-static), of the throw-away registry (docker-registry), of the multiarch validation
# (podman) and of the coredns image's file capability (setcap): installed when missing, as root.
IMAGE_PACKAGES := buildah:buildah skopeo:skopeo busybox:busybox-static docker-registry:docker-registry podman:podman \
	setcap:libcap2-bin restic:restic
.PHONY: image-packages
image-packages: ## Install the Debian packages the images need (buildah, skopeo, busybox-static, docker-registry, podman, libcap2-bin, restic) if missing; needs root.
	@missing="$$(for p in $(IMAGE_PACKAGES); do command -v "$${p%%:*}" >/dev/null || echo "$${p#*:}"; done)"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" -ne 0 ]; then echo "The images need these Debian packages: run 'sudo apt-get install" $$missing"'" >&2; exit 1; fi; \
		$(APT_GET) update -q && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -q --no-install-recommends $$missing </dev/null; \
	fi

# operator-sdk's multiarch validator inspects the CSV's images with podman, by their public names,
# mirrored to REGISTRY (hack/images/validate-multiarch.sh); tests/olm runs it against a
# throw-away registry.
.PHONY: bundle-validate-multiarch
bundle-validate-multiarch: images-push $(OPERATOR_SDK) ## Push the images to REGISTRY, then validate ./bundle with operator-sdk's multiarch validator (podman inspects them there).
	OPERATOR_SDK=$(OPERATOR_SDK) hack/images/validate-multiarch.sh $(REGISTRY)

.PHONY: images-push
images-push: images ## Copy every built image into REGISTRY (host:port, plain HTTP) under its public name, e.g. REGISTRY/quay.io/oaat-io/oaat-operator:v<VERSION>.
	@test -n "$(REGISTRY)" || { echo "Set REGISTRY=host:port" >&2; exit 1; }
	hack/images/push.sh $(REGISTRY)

.PHONY: grpc-health-probe
grpc-health-probe: $(GRPC_HEALTH_PROBE) ## Build grpc_health_probe (of the opm image) into the tools cache if necessary.
$(GRPC_HEALTH_PROBE):
	$(call go-build-tool,$@,grpc-health-probe,github.com/grpc-ecosystem/grpc-health-probe)

##@ Dependencies

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Build controller-gen into the tools cache if necessary.
$(CONTROLLER_GEN):
	$(call go-build-tool,$@,devtools,sigs.k8s.io/controller-tools/cmd/controller-gen)

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Build kustomize into the tools cache if necessary.
$(KUSTOMIZE):
	$(call go-build-tool,$@,devtools,sigs.k8s.io/kustomize/kustomize/v5)

.PHONY: control-plane
control-plane: kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok ## Build all binaries of the local cluster into the tools cache if necessary.

.PHONY: kube-apiserver
kube-apiserver: $(KUBE_APISERVER) ## Build kube-apiserver into the tools cache if necessary.
$(KUBE_APISERVER):
	$(call go-build-tool,$@,controlplane,k8s.io/kubernetes/cmd/kube-apiserver,$(KUBE_LDFLAGS))

.PHONY: kube-apiserver-floor
kube-apiserver-floor: $(KUBE_APISERVER_FLOOR) ## Build the kube-apiserver of the oldest supported Kubernetes (KUBE_VERSION_FLOOR, hack/tools/controlplane-floor) into the tools cache if necessary.
$(KUBE_APISERVER_FLOOR):
	$(call go-build-tool,$@,controlplane-floor,k8s.io/kubernetes/cmd/kube-apiserver,$(call kube-version-ldflags,$(KUBE_VERSION_FLOOR)))

.PHONY: kube-controller-manager-floor
kube-controller-manager-floor: $(KUBE_CONTROLLER_MANAGER_FLOOR) ## Build the kube-controller-manager of the oldest supported Kubernetes into the tools cache if necessary.
$(KUBE_CONTROLLER_MANAGER_FLOOR):
	$(call go-build-tool,$@,controlplane-floor,k8s.io/kubernetes/cmd/kube-controller-manager,$(call kube-version-ldflags,$(KUBE_VERSION_FLOOR)))

.PHONY: kube-scheduler-floor
kube-scheduler-floor: $(KUBE_SCHEDULER_FLOOR) ## Build the kube-scheduler of the oldest supported Kubernetes into the tools cache if necessary.
$(KUBE_SCHEDULER_FLOOR):
	$(call go-build-tool,$@,controlplane-floor,k8s.io/kubernetes/cmd/kube-scheduler,$(call kube-version-ldflags,$(KUBE_VERSION_FLOOR)))

.PHONY: kube-controller-manager
kube-controller-manager: $(KUBE_CONTROLLER_MANAGER) ## Build kube-controller-manager into the tools cache if necessary.
$(KUBE_CONTROLLER_MANAGER):
	$(call go-build-tool,$@,controlplane,k8s.io/kubernetes/cmd/kube-controller-manager,$(KUBE_LDFLAGS))

.PHONY: kube-scheduler
kube-scheduler: $(KUBE_SCHEDULER) ## Build kube-scheduler into the tools cache if necessary.
$(KUBE_SCHEDULER):
	$(call go-build-tool,$@,controlplane,k8s.io/kubernetes/cmd/kube-scheduler,$(KUBE_LDFLAGS))

.PHONY: kubelet
kubelet: $(KUBELET) ## Build the kubelet (the local cluster's real node) into the tools cache if necessary.
$(KUBELET):
	$(call go-build-tool,$@,controlplane,k8s.io/kubernetes/cmd/kubelet,$(KUBE_LDFLAGS))

.PHONY: processes
processes: $(PROCESSES) ## Build hack/processes (the local cluster's and the demo's process supervisor, devkit.Daemons) into bin/ if its sources changed.
$(PROCESSES): hack/processes/main.go $(wildcard hack/devkit/*.go) | $(LOCALBIN)
	go build -o $@ ./hack/processes

# cluster.sh's `down` removes the real node's pods through the CRI with it (Debian has no crictl).
.PHONY: cri-teardown
cri-teardown: $(CRI_TEARDOWN) ## Build cri-teardown (hack/tools/controlplane/cmd/cri-teardown) into bin/ if necessary.
$(CRI_TEARDOWN): $(TOOLS_DIR)/controlplane/cmd/cri-teardown/main.go | $(LOCALBIN)
	$(call go-build-tool,$@,controlplane,./cmd/cri-teardown)

# The real node's Service routing (iptables mode), run on the host beside the kubelet.
.PHONY: kube-proxy
kube-proxy: $(KUBE_PROXY) ## Build kube-proxy (the local cluster's Services on the real node) into the tools cache if necessary.
$(KUBE_PROXY):
	$(call go-build-tool,$@,controlplane,k8s.io/kubernetes/cmd/kube-proxy,$(KUBE_LDFLAGS))

# The cluster DNS of the real node, run as a Deployment from the image make images builds.
.PHONY: coredns
coredns: $(COREDNS) ## Build CoreDNS (the local cluster's DNS on the real node) into the tools cache if necessary.
$(COREDNS):
	$(call go-build-tool,$@,coredns,github.com/coredns/coredns)

.PHONY: kubectl
kubectl: $(KUBECTL_BIN) ## Build kubectl into the tools cache if necessary.
$(KUBECTL_BIN):
	$(call go-build-tool,$@,controlplane,k8s.io/kubernetes/cmd/kubectl,$(KUBE_LDFLAGS))

.PHONY: etcd
etcd: $(ETCD) ## Build etcd into the tools cache if necessary.
$(ETCD):
	$(call go-build-tool,$@,etcd,go.etcd.io/etcd/server/v3)

.PHONY: kwok
kwok: $(KWOK) ## Build kwok into the tools cache if necessary.
$(KWOK):
	$(call go-build-tool,$@,kwok,sigs.k8s.io/kwok/cmd/kwok)

.PHONY: operator-sdk
operator-sdk: $(OPERATOR_SDK) ## Build operator-sdk into the tools cache if necessary.
$(OPERATOR_SDK):
	$(call go-build-tool,$@,operator-sdk,github.com/operator-framework/operator-sdk/cmd/operator-sdk,$(OPERATOR_SDK_LDFLAGS),$(OPERATOR_FRAMEWORK_TAGS))

# The program of the scorecard-test image: runs one built-in scorecard test (its argument) against
# the bundle at /bundle and prints a v1alpha3 TestStatus.
.PHONY: scorecard-test
scorecard-test: $(SCORECARD_TEST) ## Build the scorecard test runner (operator-sdk's scorecard-test image program) into the tools cache if necessary.
$(SCORECARD_TEST):
	$(call go-build-tool,$@,operator-sdk,github.com/operator-framework/operator-sdk/images/scorecard-test,$(OPERATOR_SDK_LDFLAGS),$(OPERATOR_FRAMEWORK_TAGS))

.PHONY: opm
opm: $(OPM) ## Build opm into the tools cache if necessary.
$(OPM):
	$(call go-build-tool,$@,opm,github.com/operator-framework/operator-registry/cmd/opm,$(OPM_LDFLAGS),$(OPERATOR_FRAMEWORK_TAGS))

# OLM's two operators, run outside the local cluster (KUBECONFIG, --namespace olm).
.PHONY: olm
olm: $(OLM) ## Build OLM's olm operator into the tools cache if necessary.
$(OLM):
	$(call go-build-tool,$@,olm,github.com/operator-framework/operator-lifecycle-manager/cmd/olm,$(OLM_LDFLAGS),$(OPERATOR_FRAMEWORK_TAGS))

.PHONY: catalog-operator
catalog-operator: $(CATALOG_OPERATOR) ## Build OLM's catalog operator into the tools cache if necessary.
# After the olm operator, never beside it: `make -j2` (TEST_PAIR) would otherwise compile the
# module's dependencies twice at once on a cold machine (310 s and 341 s measured) rather than
# once and reuse them from Go's cache.
$(CATALOG_OPERATOR): | $(OLM)
	$(call go-build-tool,$@,olm,github.com/operator-framework/operator-lifecycle-manager/cmd/catalog,$(OLM_LDFLAGS),$(OPERATOR_FRAMEWORK_TAGS))

# golangci-lint, and the Kube API Linter's command: the same golangci-lint (the version that
# hack/tools/golangci-lint requires) with the Kube API Linter compiled in as a module plugin, as
# `golangci-lint custom` would build it but without its git checkout. Both from one module, so the
# second build reuses the first one's compiled packages.
.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Build golangci-lint into the tools cache if necessary.
$(GOLANGCI_LINT):
	$(call go-build-tool,$@,golangci-lint,github.com/golangci/golangci-lint/v2/cmd/golangci-lint)

.PHONY: kube-api-linter
kube-api-linter: $(KUBE_API_LINTER) ## Build the Kube API Linter (golangci-lint with the kubeapilinter module) into the tools cache if necessary.
$(KUBE_API_LINTER):
	$(call go-build-tool,$@,golangci-lint,sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter)

.PHONY: cyclonedx-gomod
cyclonedx-gomod: $(CYCLONEDX_GOMOD) ## Build cyclonedx-gomod (the release's SBOMs) into the tools cache if necessary.
$(CYCLONEDX_GOMOD):
	$(call go-build-tool,$@,cyclonedx-gomod,github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod)

.PHONY: crd-ref-docs
crd-ref-docs: $(CRD_REF_DOCS) ## Build crd-ref-docs (the API reference's generator) into the tools cache if necessary.
$(CRD_REF_DOCS):
	$(call go-build-tool,$@,crd-ref-docs,github.com/elastic/crd-ref-docs)

.PHONY: krew
krew: $(KREW) ## Build krew (kubectl's plugin manager) into the tools cache if necessary.
$(KREW):
	$(call go-build-tool,$@,krew,sigs.k8s.io/krew/cmd/krew)

.PHONY: helm
helm: $(HELM) ## Build Helm into the tools cache if necessary.
$(HELM):
	$(call go-build-tool,$@,helm,helm.sh/helm/v4/cmd/helm,-X helm.sh/helm/v4/internal/version.version=$(HELM_VERSION))

.PHONY: cpb
cpb: $(CPB) ## Build OLM's cpb (the bundle unpack Job's copier, in the OLM image) into the tools cache if necessary.
$(CPB):
	$(call go-build-tool,$@,olm,github.com/operator-framework/operator-lifecycle-manager/util/cpb,,$(OPERATOR_FRAMEWORK_TAGS))

.PHONY: copy-content
copy-content: $(COPY_CONTENT) ## Build OLM's copy-content (in the OLM image) into the tools cache if necessary.
$(COPY_CONTENT):
	$(call go-build-tool,$@,olm,github.com/operator-framework/operator-lifecycle-manager/cmd/copy-content,$(OLM_LDFLAGS),$(OPERATOR_FRAMEWORK_TAGS))

# go-build-tool builds package $(3) of the tools module hack/tools/$(2) into file $(1), with
# extra linker flags $(4) and build tags $(5), and says how long it took (the cold-machine figures
# of docs/development.md add these up). It goes through a temporary file of its own, so that an
# interrupted build leaves nothing that make would take for a built tool and two clones building
# the same tool into the shared cache do not write one file. Static (CGO_ENABLED=0), as upstream
# releases are, and without the symbol table and DWARF (-s -w), which no test reads: they only
# lengthen each link.
define go-build-tool
@echo "Building $(notdir $(1)) from hack/tools/$(2)"
@mkdir -p $(dir $(1))
@start=$$(date +%s); cd $(TOOLS_DIR)/$(2) && GOWORK=off CGO_ENABLED=0 go build -buildvcs=false -trimpath$(if $(5), -tags $(5)) -ldflags "$(strip -s -w $(4))" -o $(1).tmp.$$$$ $(3) && mv -f $(1).tmp.$$$$ $(1) && echo "Built $(notdir $(1)) in $$(( $$(date +%s) - start ))s"
endef
