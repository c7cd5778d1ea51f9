# VERSION defines the project version for the bundle.
# Update this value when you upgrade the version of your project.
# To re-generate a bundle for another specific version without changing the standard setup, you can:
# - use the VERSION as arg of the bundle target (e.g make bundle VERSION=0.0.2)
# - use environment variables to overwrite this value (e.g export VERSION=0.0.2)
VERSION ?= 0.1.0

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

# Image URL to use all building/pushing image targets
IMG ?= controller:latest

# CONTAINER_TOOL defines the container tool to be used for building images.
# Be aware that the target commands are only tested with Docker which is
# scaffolded by default. However, you might want to replace it to use other
# tools. (i.e. podman)
CONTAINER_TOOL ?= docker

# Tools: each is built from a pinned Go module under hack/tools/ into bin/, with its version in the
# file name; a file that exists is not built again. The versions are read from those go.mod files
# (and nowhere else). Defined here, before the rules that name the files as prerequisites.

## Location to install dependencies to
LOCALBIN ?= $(CURDIR)/bin
TOOLS_DIR := $(CURDIR)/hack/tools

# gomod-version prints the version at which hack/tools/$(1)/go.mod requires module $(2).
gomod-version = $(shell awk '$$1 == "require" && $$2 == "$(2)" { print $$3; exit } $$1 == "$(2)" && $$2 ~ /^v/ { print $$2; exit }' $(TOOLS_DIR)/$(1)/go.mod)

## Tool Versions
KUBE_VERSION := $(call gomod-version,controlplane,k8s.io/kubernetes)
ETCD_VERSION := $(call gomod-version,etcd,go.etcd.io/etcd/server/v3)
KWOK_VERSION := $(call gomod-version,kwok,sigs.k8s.io/kwok)
CONTROLLER_TOOLS_VERSION := $(call gomod-version,devtools,sigs.k8s.io/controller-tools)
KUSTOMIZE_VERSION := $(call gomod-version,devtools,sigs.k8s.io/kustomize/kustomize/v5)

$(foreach v,KUBE_VERSION ETCD_VERSION KWOK_VERSION CONTROLLER_TOOLS_VERSION KUSTOMIZE_VERSION,\
  $(if $($(v)),,$(error $(v) could not be read from the go.mod files under hack/tools)))

## Tool Binaries
CONTROLLER_GEN := $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
KUSTOMIZE := $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
KUBE_APISERVER := $(LOCALBIN)/kube-apiserver-$(KUBE_VERSION)
KUBE_CONTROLLER_MANAGER := $(LOCALBIN)/kube-controller-manager-$(KUBE_VERSION)
KUBE_SCHEDULER := $(LOCALBIN)/kube-scheduler-$(KUBE_VERSION)
KUBECTL_BIN := $(LOCALBIN)/kubectl-$(KUBE_VERSION)
ETCD := $(LOCALBIN)/etcd-$(ETCD_VERSION)
KWOK := $(LOCALBIN)/kwok-$(KWOK_VERSION)

# KUBECTL is the kubectl that install/deploy use; the pinned one unless overridden.
KUBECTL ?= $(KUBECTL_BIN)

# Without these the Kubernetes binaries report v0.0.0-master, and OLM then takes the cluster
# for 0.0.0 and refuses every CSV with a minKubeVersion.
KUBE_VERSION_PARTS := $(subst ., ,$(patsubst v%,%,$(KUBE_VERSION)))
KUBE_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(KUBE_VERSION_PARTS)) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(KUBE_VERSION_PARTS)) \
	-X k8s.io/component-base/version.gitTreeState=clean

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
generate: $(CONTROLLER_GEN) ## Generate code containing DeepCopy, DeepCopyInto, and DeepCopyObject method implementations.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./..."

.PHONY: fmt
fmt: ## Run go fmt against code.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet against code.
	go vet ./...

# envtest (controller-runtime) starts the API server, etcd and kubectl named by these variables.
ENVTEST_ENV = TEST_ASSET_KUBE_APISERVER=$(KUBE_APISERVER) TEST_ASSET_ETCD=$(ETCD) TEST_ASSET_KUBECTL=$(KUBECTL_BIN)

.PHONY: test
test: manifests generate fmt vet $(KUBE_APISERVER) $(ETCD) $(KUBECTL_BIN) ## Run all tests (integration tests on envtest with the pinned control plane) with coverage in cover.out.
	$(ENVTEST_ENV) go test ./... -coverprofile cover.out

.PHONY: test-unit
test-unit: ## Run the unit tests only (internal/, api/), without a control plane.
	go test ./internal/... ./api/...

.PHONY: verify
verify: manifests generate fmt ## Regenerate code and manifests, fail if they differ from what is committed or are untracked.
	hack/verify-clean-tree.sh

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the manager and the kubectl-oaat plugin into bin/.
	go build -o bin/manager ./cmd
	go build -o bin/kubectl-oaat ./cmd/kubectl-oaat

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

##@ Local cluster

# hack/cluster/cluster.sh takes the binaries from these variables.
CLUSTER_ENV = KUBE_APISERVER=$(KUBE_APISERVER) KUBE_CONTROLLER_MANAGER=$(KUBE_CONTROLLER_MANAGER) \
	KUBE_SCHEDULER=$(KUBE_SCHEDULER) KUBECTL=$(KUBECTL_BIN) ETCD=$(ETCD) KWOK=$(KWOK)
CLUSTER_BINARIES = $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KUBECTL_BIN) $(ETCD) $(KWOK)

.PHONY: cluster-up
cluster-up: $(CLUSTER_BINARIES) ## Start the local cluster (etcd, API server, controllers, kwok nodes) if not up; prints the kubeconfig path last.
	$(CLUSTER_ENV) hack/cluster/cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop the local cluster; with PURGE=1 also delete its state directory.
	$(CLUSTER_ENV) hack/cluster/cluster.sh down $(if $(PURGE),--purge)

.PHONY: cluster-status
cluster-status: ## Show the local cluster's processes and kubeconfig; fails unless all run.
	$(CLUSTER_ENV) hack/cluster/cluster.sh status

.PHONY: cluster-smoke
cluster-smoke: $(CLUSTER_BINARIES) ## Check the local cluster end to end (in its own state directory), then stop it.
	$(CLUSTER_ENV) hack/cluster/smoke.sh

##@ Demo

# The demo runs the manager on this machine as its ServiceAccount (hack/local-operator.sh), not
# in a Deployment: no image to build. Its binaries are built with go build alone, not through
# `build`, which also regenerates code and manifests and formats the tree.
MANAGER_BIN = $(LOCALBIN)/manager
KUBECTL_OAAT_BIN = $(LOCALBIN)/kubectl-oaat
DEMO_ENV = $(CLUSTER_ENV) KUSTOMIZE=$(KUSTOMIZE) MANAGER=$(MANAGER_BIN) KUBECTL_OAAT=$(KUBECTL_OAAT_BIN)

.PHONY: demo
demo: $(CLUSTER_BINARIES) $(KUSTOMIZE) ## Start the local cluster and the operator, run config/samples in namespace oaat-demo, watch it (DEMO_SECONDS=N: N seconds, then check).
	go build -o $(MANAGER_BIN) ./cmd
	go build -o $(KUBECTL_OAAT_BIN) ./cmd/kubectl-oaat
	$(DEMO_ENV) hack/demo.sh up

.PHONY: demo-down
demo-down: ## Stop the demo's operator, then the local cluster; with PURGE=1 also delete their state.
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

##@ Dependencies

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Build controller-gen into bin/ if necessary.
$(CONTROLLER_GEN): | $(LOCALBIN)
	$(call go-build-tool,$@,devtools,sigs.k8s.io/controller-tools/cmd/controller-gen)

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Build kustomize into bin/ if necessary.
$(KUSTOMIZE): | $(LOCALBIN)
	$(call go-build-tool,$@,devtools,sigs.k8s.io/kustomize/kustomize/v5)

.PHONY: control-plane
control-plane: kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok ## Build all binaries of the local cluster into bin/ if necessary.

.PHONY: kube-apiserver
kube-apiserver: $(KUBE_APISERVER) ## Build kube-apiserver into bin/ if necessary.
$(KUBE_APISERVER): | $(LOCALBIN)
	$(call go-build-tool,$@,controlplane,k8s.io/kubernetes/cmd/kube-apiserver,$(KUBE_LDFLAGS))

.PHONY: kube-controller-manager
kube-controller-manager: $(KUBE_CONTROLLER_MANAGER) ## Build kube-controller-manager into bin/ if necessary.
$(KUBE_CONTROLLER_MANAGER): | $(LOCALBIN)
	$(call go-build-tool,$@,controlplane,k8s.io/kubernetes/cmd/kube-controller-manager,$(KUBE_LDFLAGS))

.PHONY: kube-scheduler
kube-scheduler: $(KUBE_SCHEDULER) ## Build kube-scheduler into bin/ if necessary.
$(KUBE_SCHEDULER): | $(LOCALBIN)
	$(call go-build-tool,$@,controlplane,k8s.io/kubernetes/cmd/kube-scheduler,$(KUBE_LDFLAGS))

.PHONY: kubectl
kubectl: $(KUBECTL_BIN) ## Build kubectl into bin/ if necessary.
$(KUBECTL_BIN): | $(LOCALBIN)
	$(call go-build-tool,$@,controlplane,k8s.io/kubernetes/cmd/kubectl,$(KUBE_LDFLAGS))

.PHONY: etcd
etcd: $(ETCD) ## Build etcd into bin/ if necessary.
$(ETCD): | $(LOCALBIN)
	$(call go-build-tool,$@,etcd,go.etcd.io/etcd/server/v3)

.PHONY: kwok
kwok: $(KWOK) ## Build kwok into bin/ if necessary.
$(KWOK): | $(LOCALBIN)
	$(call go-build-tool,$@,kwok,sigs.k8s.io/kwok/cmd/kwok)

# go-build-tool builds package $(3) of the tools module hack/tools/$(2) into file $(1), with
# extra linker flags $(4). It goes through a temporary file so that an interrupted build leaves
# nothing that make would take for a built tool. Static (CGO_ENABLED=0), as upstream releases are.
define go-build-tool
@echo "Building $(notdir $(1)) from hack/tools/$(2)"
cd $(TOOLS_DIR)/$(2) && GOWORK=off CGO_ENABLED=0 go build -buildvcs=false -trimpath$(if $(4), -ldflags "$(strip $(4))") -o $(1).tmp $(3)
mv -f $(1).tmp $(1)
endef
