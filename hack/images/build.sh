#!/usr/bin/env bash
# Builds the images of the project and those the local cluster and the operator-framework tools
# need, without a Docker engine: buildah, with its storage (vfs) under bin/images/, writes each
# image as an OCI image layout bin/images/<name>/. An image is rebuilt only when the hash of its
# inputs differs from bin/images/<name>.inputs. At the end bin/images/images.list maps every
# public name to its layout (read by push.sh and list.sh). See hack/images/README.md.
#
# Usage: build.sh [NAME...]   (default: every image, in dependency order)
#
# Environment (make images sets all of it, from the Makefile's variables):
#   IMG, BUNDLE_IMG, CATALOG_IMG, SCORECARD_IMG, SCORECARD_TEST_IMG   the public names
#   OPM_IMAGES       the names of the opm image (the catalog's base first)
#   BUSYBOX_IMAGES   the names of the busybox image
#   RESTIC_IMG       the name of the restic image (its tag: the version of Debian's restic)
#   PAUSE_IMG        the name of the sandbox image
#   OPERATOR_PLATFORMS   the platforms of the operator image, e.g. "linux/amd64 linux/arm64"
#   KUBERNETES_SRC   the k8s.io/kubernetes module directory (build/pause/linux/pause.c)
#   OLM_IMG, COREDNS_IMG   the names of OLM's image and of CoreDNS's
#   OPM, SCORECARD_TEST, GRPC_HEALTH_PROBE   the pinned binaries under bin/
#   OLM, CATALOG_OPERATOR, CPB, COPY_CONTENT   OLM's binaries (the olm image)
#   COREDNS          CoreDNS (the coredns image)
#   PREVIOUS_COMMIT, PREVIOUS_IMG, PREVIOUS_BUNDLE_IMG, PREVIOUS_CATALOG_IMG   the previous release
#   IMAGES_DIR       the output directory (default <repo>/bin/images)
#   VERSION, REVISION, SOURCE_DATE_EPOCH, VERSION_LDFLAGS   the release's identity (operator,
#                    bundle and catalog: their OCI labels, their timestamps, the manager's -X flags)
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
cd "$REPO_ROOT"

ALL_IMAGES=(pause busybox restic operator bundle opm catalog scorecard-test scorecard olm coredns previous-operator previous-bundle previous-catalog)

: "${IMG:?run this through make images}" "${BUNDLE_IMG:?}" "${CATALOG_IMG:?}" "${SCORECARD_IMG:?}"
: "${SCORECARD_TEST_IMG:?}" "${OPM_IMAGES:?}" "${BUSYBOX_IMAGES:?}" "${RESTIC_IMG:?}" "${PAUSE_IMG:?}"
: "${OPERATOR_PLATFORMS:?}" "${KUBERNETES_SRC:?}" "${OPM:?}" "${SCORECARD_TEST:?}" "${GRPC_HEALTH_PROBE:?}"
: "${VERSION:?}" "${REVISION:?}" "${SOURCE_DATE_EPOCH:?}" "${VERSION_LDFLAGS:?}"

# Where the project lives: the release images' org.opencontainers.image.source and .url.
PROJECT_URL=https://github.com/oaat-io/oaat-operator

OUT=${IMAGES_DIR:-$REPO_ROOT/bin/images}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# One build at a time per output directory: they share the storage, which each empties at the end.
exec {LOCK_FD}>"$OUT/.lock"
flock --timeout 1800 "$LOCK_FD" || { printf 'images: error: another build holds %s/.lock\n' "$OUT" >&2; exit 1; }
# Build contexts: regenerated for each build.
WORK=$OUT/work

declare -A PUBLIC_NAMES=(
	[pause]=$PAUSE_IMG
	[busybox]=$BUSYBOX_IMAGES
	[restic]=$RESTIC_IMG
	[operator]=$IMG
	[bundle]=$BUNDLE_IMG
	[opm]=$OPM_IMAGES
	[catalog]=$CATALOG_IMG
	[scorecard-test]=$SCORECARD_TEST_IMG
	[scorecard]=$SCORECARD_IMG
	[olm]=${OLM_IMG:-}
	[coredns]=${COREDNS_IMG:-}
	[previous-operator]=${PREVIOUS_IMG:-}
	[previous-bundle]=${PREVIOUS_BUNDLE_IMG:-}
	[previous-catalog]=${PREVIOUS_CATALOG_IMG:-}
)

# The storage is a cache only: every image leaves it as an OCI layout, and it is emptied at the
# end. No registry is consulted: no search registries, and every build runs with --pull-never.
BUILDAH=(buildah --root "$OUT/storage" --runroot "$OUT/run" --storage-driver vfs)
export CONTAINERS_REGISTRIES_CONF=$SCRIPT_DIR/registries.conf

log() { printf 'images: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# bud CONTEXT ARGS...: buildah bud, quiet, never pulling. Every image is reproducible: its
# created time, history and file times are a fixed time, 0 for the images of other projects, the
# commit's time for the release's images, whose release_args (given later) override it.
bud() {
	local context=$1
	shift
	"${BUILDAH[@]}" bud --quiet --pull-never --layers=false --timestamp 0 "$@" "$context" >/dev/null
}

# release_args TITLE DESCRIPTION: bud's arguments for an image of the release (operator, bundle,
# catalog), one a line: its time is the commit's (SOURCE_DATE_EPOCH, never the build's), and its
# org.opencontainers.image labels say what it is and which commit it was built from.
release_args() {
	printf '%s\n' --timestamp "$SOURCE_DATE_EPOCH" \
		--label "org.opencontainers.image.title=$1" \
		--label "org.opencontainers.image.description=$2" \
		--label "org.opencontainers.image.version=$VERSION" \
		--label "org.opencontainers.image.revision=$REVISION" \
		--label "org.opencontainers.image.created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)" \
		--label "org.opencontainers.image.source=$PROJECT_URL" \
		--label "org.opencontainers.image.url=$PROJECT_URL" \
		--label "org.opencontainers.image.licenses=Apache-2.0"
}

# push_layout IMAGE DEST: writes IMAGE (or manifest list, with --all) from the storage to the OCI
# layout DEST.
push_layout() {
	"${BUILDAH[@]}" push --quiet "$1" "oci:$2"
}

# require_static FILE: the images are FROM scratch, so every program must be statically linked
# (no ELF interpreter).
require_static() {
	readelf -l "$1" | grep -q 'Requesting program interpreter' && die "$1 is not statically linked"
	return 0
}

# A root file system for scratch images whose programs run as a non-root user: what they may use
# of distroless/static (the base of ./Dockerfile and tests/scorecard/Dockerfile): the users and
# groups, a world-writable /tmp, the CA certificates, the name service order.
# write_rootfs DIR [EXTRA PASSWD LINES...]
write_rootfs() {
	local dir=$1
	shift
	mkdir -p "$dir/etc/ssl/certs" "$dir/home/nonroot"
	mkdir -m 1777 "$dir/tmp"
	{
		printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
			'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
			'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin'
		if (($#)); then printf '%s\n' "$@"; fi
	} >"$dir/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' >"$dir/etc/group"
	printf 'hosts: files dns\n' >"$dir/etc/nsswitch.conf"
	cp /etc/ssl/certs/ca-certificates.crt "$dir/etc/ssl/certs/"
	chown -R 65532:65532 "$dir/home/nonroot"
}

# sums FILE...: one line per file, its content hash and its name without the directory, so that
# the hash of an image's inputs is the same in every checkout and with every tool location.
sums() {
	local f
	for f in "$@"; do printf '%s  %s\n' "$(sha256sum <"$f" | cut -d' ' -f1)" "$(basename "$f")"; done
}

# hash_files PATHSPEC...: one line per file (content hash and path), directories walked through git
# (tracked and untracked, not ignored), so the list is the same on every machine.
hash_files() {
	git ls-files -z --cached --others --exclude-standard -- "$@" | sort -z | xargs -0 -r sha256sum
}

# ---------------------------------------------------------------------------------------------
# The images: inputs_NAME prints what the image is made from (hashed), build_NAME DEST builds it
# into the OCI layout DEST.

inputs_pause() {
	sums "$KUBERNETES_SRC/build/pause/linux/pause.c"
	echo "$PAUSE_IMG $(gcc --version | head -n1)"
}
# The sandbox image as Kubernetes builds it (build/pause/Makefile, build/pause/Dockerfile):
# pause.c compiled -Os -static and stripped, FROM scratch, user 65535. amd64 only: this machine
# has no arm64 C cross-compiler, and the node is amd64.
build_pause() {
	local ctx=$WORK/pause tag=${PAUSE_IMG##*:}
	mkdir -p "$ctx"
	gcc -Os -Wall -Werror -static "-DVERSION=v$tag-$(basename "$KUBERNETES_SRC" | sed 's/.*@//')" \
		-o "$ctx/pause" "$KUBERNETES_SRC/build/pause/linux/pause.c"
	strip "$ctx/pause"
	bud "$ctx" -f "$SCRIPT_DIR/pause.Containerfile" --platform linux/amd64 -t "$PAUSE_IMG"
	push_layout "$PAUSE_IMG" "$1"
}

inputs_busybox() {
	sums /bin/busybox
	dpkg-query -W busybox-static
}
# busybox_rootfs DIR: a root file system of Debian's busybox-static, each applet a symbolic link
# in /bin as in the Docker library image, root's home and a world-writable /tmp.
busybox_rootfs() {
	local dir=$1 applet
	mkdir -p "$dir/bin" "$dir/root" "$dir/etc"
	mkdir -m 1777 "$dir/tmp"
	cp /bin/busybox "$dir/bin/busybox"
	require_static "$dir/bin/busybox"
	for applet in $(/bin/busybox --list); do
		[[ $applet == busybox ]] || ln -s busybox "$dir/bin/$applet"
	done
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/home:/bin/false' >"$dir/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nobody:x:65534:' >"$dir/etc/group"
}

build_busybox() {
	local ctx=$WORK/busybox name=${BUSYBOX_IMAGES%% *}
	busybox_rootfs "$ctx/rootfs"
	bud "$ctx" -f "$SCRIPT_DIR/busybox.Containerfile" --platform linux/amd64 -t "$name"
	push_layout "$name" "$1"
}

# restic_files: Debian's restic and what its ELF interpreter loads (ldd's paths, the interpreter
# among them), one a line.
restic_files() {
	echo /usr/bin/restic
	ldd /usr/bin/restic | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
}
inputs_restic() {
	# shellcheck disable=SC2046 # one path a line, none with a space
	sums /bin/busybox $(restic_files)
	dpkg-query -W busybox-static restic
	echo "$RESTIC_IMG"
}
# Debian's restic (the restic package; amd64, the node's platform) on the busybox root file
# system, each file at its path: the workload of docs/pvc-backup.md's restic sample.
build_restic() {
	local ctx=$WORK/restic file version
	version=$(restic version | cut -d' ' -f2)
	[[ $RESTIC_IMG == *:"$version" ]] || die "Debian's restic is $version; RESTIC_IMG is $RESTIC_IMG"
	busybox_rootfs "$ctx/rootfs"
	for file in $(restic_files); do
		mkdir -p "$ctx/rootfs$(dirname "$file")"
		cp -L "$file" "$ctx/rootfs$file"
	done
	bud "$ctx" -f "$SCRIPT_DIR/restic.Containerfile" --platform linux/amd64 -t "$RESTIC_IMG"
	push_layout "$RESTIC_IMG" "$1"
}

# The operator and the custom scorecard tests are built from the contract of their Dockerfile
# (hack/images/contract: the program's path, user and entrypoint of the final stage), with the
# program cross-compiled here instead of in a golang stage: no emulation, no base image to pull.
# The caller's arrays go_flags (go build's flags) and bud_args (more of bud's), when it declares
# them, apply to every platform (bash's locals are seen by the functions a function calls).
# build_from_dockerfile DEST DOCKERFILE MODULE_DIR PACKAGE NAME PLATFORMS...
build_from_dockerfile() {
	local dest=$1 dockerfile=$2 module=$3 package=$4 name=$5
	shift 5
	local ctx=$WORK/$(basename "$dest" .tmp) program platform os arch
	program=$(go run ./hack/images/contract program "$dockerfile")
	mkdir -p "$ctx"
	write_rootfs "$ctx/rootfs"
	go run ./hack/images/contract containerfile "$dockerfile" >"$ctx/Containerfile"
	"${BUILDAH[@]}" manifest rm "$name" >/dev/null 2>&1 || true
	for platform in "$@"; do
		os=${platform%/*} arch=${platform#*/}
		mkdir -p "$ctx/$os-$arch"
		(cd "$module" && GOWORK=off CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build ${go_flags[@]+"${go_flags[@]}"} \
			-o "$ctx/$os-$arch/$(basename "$program")" "$package")
		bud "$ctx" -f "$ctx/Containerfile" --platform "$platform" --manifest "$name" ${bud_args[@]+"${bud_args[@]}"}
	done
	"${BUILDAH[@]}" manifest push --quiet --all "$name" "oci:$dest"
	go run ./hack/images/contract check "$dockerfile" "$dest" "$@"
}

inputs_operator() {
	hash_files go.mod go.sum cmd api controllers internal Dockerfile hack/images/contract ":(exclude)*_test.go"
	echo "$OPERATOR_PLATFORMS $(go version) $VERSION_LDFLAGS"
	operator_args
}
operator_args() { release_args oaat-operator "Runs a group of items one at a time: a Kubernetes operator"; }
# release_go_flags [LDFLAGS] sets the caller's go_flags to go build's flags of every shipped Go
# binary (make release): no paths of this machine, no VCS stamp, no symbol table, and LDFLAGS more
# of the linker's.
release_go_flags() { go_flags=(-trimpath -buildvcs=false -ldflags "-s -w${1:+ $1}"); }
# The manager as every shipped Go binary is built, the version and revision set by the linker.
build_operator() {
	local go_flags bud_args
	release_go_flags "$VERSION_LDFLAGS"
	mapfile -t bud_args < <(operator_args)
	# shellcheck disable=SC2086 # the platforms are words
	build_from_dockerfile "$1" Dockerfile "$REPO_ROOT" ./cmd "$IMG" $OPERATOR_PLATFORMS
}

inputs_scorecard() {
	hash_files tests/scorecard hack/images/contract ":(exclude)*_test.go"
	go version
}
build_scorecard() {
	build_from_dockerfile "$1" tests/scorecard/Dockerfile "$REPO_ROOT/tests/scorecard" . "$SCORECARD_IMG" linux/amd64
}

inputs_bundle() {
	hash_files bundle bundle.Dockerfile .dockerignore
	bundle_args
}
bundle_args() { release_args oaat-operator-bundle "The OLM bundle of oaat-operator"; }
build_bundle() {
	local args
	mapfile -t args < <(bundle_args)
	bud "$REPO_ROOT" -f bundle.Dockerfile -t "$BUNDLE_IMG" "${args[@]}"
	push_layout "$BUNDLE_IMG" "$1"
}

inputs_opm() { sums "$OPM" "$GRPC_HEALTH_PROBE" /bin/busybox; }
# opm as the operator-registry release builds it (release/goreleaser.opm.Dockerfile): /bin/opm,
# /bin/grpc_health_probe for the catalog pods' probes, /etc/nsswitch.conf, user 1001; and, as
# its base distroless/static:debug has them, a busybox shell and applets in /busybox on the PATH
# (the registry pod of `operator-sdk run bundle` starts `sh -c "opm serve ..."` in this image).
build_opm() {
	local ctx=$WORK/opm name=${OPM_IMAGES%% *} applet
	mkdir -p "$ctx"
	write_rootfs "$ctx/rootfs"
	mkdir -p "$ctx/rootfs/busybox"
	cp /bin/busybox "$ctx/rootfs/busybox/busybox"
	require_static "$ctx/rootfs/busybox/busybox"
	for applet in $(/bin/busybox --list); do
		[[ $applet == busybox ]] || ln -s busybox "$ctx/rootfs/busybox/$applet"
	done
	cp "$OPM" "$ctx/opm"
	cp "$GRPC_HEALTH_PROBE" "$ctx/grpc_health_probe"
	require_static "$ctx/opm"
	require_static "$ctx/grpc_health_probe"
	bud "$ctx" -f "$SCRIPT_DIR/opm.Containerfile" --platform linux/amd64 -t "$name"
	push_layout "$name" "$1"
}

inputs_catalog() {
	hash_files catalog catalog.Dockerfile .dockerignore
	cat "$OUT/opm.inputs"
	catalog_args
}
catalog_args() { release_args oaat-operator-catalog "The OLM file-based catalog of oaat-operator"; }
# catalog.Dockerfile as it is: its base, the opm image, is taken from bin/images/opm into the
# storage under every name it has; its RUN step (opm serve --cache-only) runs with chroot
# isolation, which needs no OCI runtime.
build_catalog() {
	local args
	mapfile -t args < <(catalog_args)
	catalog_image "$1" "$REPO_ROOT" "$CATALOG_IMG" "${args[@]}"
}

# catalog_image DEST CONTEXT NAME [BUD-ARGS...]: CONTEXT's catalog.Dockerfile, FROM the opm image.
catalog_image() {
	local dest=$1 context=$2 image=$3 name base
	shift 3
	[[ -f $OUT/opm/index.json ]] || die "the catalog is built FROM the opm image: build opm first"
	# skopeo copies the layout into the storage under its public name: buildah pull would name it
	# after the layout's path, which a checkout path with capitals makes an invalid reference.
	skopeo copy --quiet "oci:$OUT/opm" "containers-storage:[vfs@$OUT/storage+$OUT/run]${OPM_IMAGES%% *}"
	for name in ${OPM_IMAGES#* }; do "${BUILDAH[@]}" tag "${OPM_IMAGES%% *}" "$name"; done
	for base in $(awk 'toupper($1) == "FROM" { print $2 }' "$context/catalog.Dockerfile"); do
		[[ " $OPM_IMAGES " == *" $base "* ]] || die "$context/catalog.Dockerfile is FROM $base, not one of the opm image's names ($OPM_IMAGES)"
	done
	bud "$context" -f "$context/catalog.Dockerfile" --isolation chroot -t "$image" "$@"
	push_layout "$image" "$dest"
}

# The previous release (PREVIOUS_COMMIT), from its commit's tree: the operator (amd64), its bundle
# and its catalog (with the channel that commit's catalog has), each as that commit builds it.
previous_src() {
	local dir=$WORK/previous-src
	: "${PREVIOUS_COMMIT:?run this through make images}"
	if [[ ! -f $dir/.commit || $(<"$dir/.commit") != "$PREVIOUS_COMMIT" ]]; then
		rm -rf "$dir"
		mkdir -p "$dir"
		git -C "$REPO_ROOT" archive "$PREVIOUS_COMMIT" | tar -x -C "$dir"
		echo "$PREVIOUS_COMMIT" >"$dir/.commit"
	fi
	printf '%s' "$dir"
}
# The previous manager is built as this release's is (release_go_flags, without its version), so
# that it reuses the packages the operator image compiled: the two go.mod files differ in a few lines.
inputs_previous-operator() {
	local go_flags
	release_go_flags
	echo "$PREVIOUS_COMMIT $PREVIOUS_IMG $(go version) ${go_flags[*]}"
	hash_files hack/images/contract
}
build_previous-operator() {
	local src go_flags
	release_go_flags
	src=$(previous_src)
	build_from_dockerfile "$1" "$src/Dockerfile" "$src" ./cmd "$PREVIOUS_IMG" linux/amd64
}
inputs_previous-bundle() { echo "$PREVIOUS_COMMIT $PREVIOUS_BUNDLE_IMG"; }
build_previous-bundle() {
	local src
	src=$(previous_src)
	bud "$src" -f "$src/bundle.Dockerfile" -t "$PREVIOUS_BUNDLE_IMG"
	push_layout "$PREVIOUS_BUNDLE_IMG" "$1"
}
inputs_previous-catalog() {
	echo "$PREVIOUS_COMMIT $PREVIOUS_CATALOG_IMG"
	cat "$OUT/opm.inputs"
}
build_previous-catalog() { catalog_image "$1" "$(previous_src)" "$PREVIOUS_CATALOG_IMG"; }

inputs_scorecard-test() { sums "$SCORECARD_TEST"; }
# operator-sdk's scorecard-test image (images/scorecard-test/Dockerfile of the module): the
# program in /usr/local/bin, user 1001 with HOME /opt/scorecard-test.
build_scorecard-test() {
	local ctx=$WORK/scorecard-test
	mkdir -p "$ctx"
	write_rootfs "$ctx/rootfs" 'scorecard-test:x:1001:0:scorecard-test user:/opt/scorecard-test:/sbin/nologin'
	mkdir -p "$ctx/rootfs/opt/scorecard-test"
	chown 1001:0 "$ctx/rootfs/opt/scorecard-test"
	cp "$SCORECARD_TEST" "$ctx/scorecard-test"
	require_static "$ctx/scorecard-test"
	bud "$ctx" -f "$SCRIPT_DIR/scorecard-test.Containerfile" --platform linux/amd64 -t "$SCORECARD_TEST_IMG"
	push_layout "$SCORECARD_TEST_IMG" "$1"
}

inputs_olm() { sums "$OLM" "$CATALOG_OPERATOR" "$CPB" "$COPY_CONTENT" /bin/busybox; }
# OLM's image (operator-lifecycle-manager's Dockerfile): the two operators, and what the bundle
# unpack Job runs from it (-util-image): /bin/cp, then /bin/cpb. The deploy manifests run
# /bin/olm and /bin/catalog by path.
build_olm() {
	local ctx=$WORK/olm bin
	: "${OLM_IMG:?}" "${OLM:?}" "${CATALOG_OPERATOR:?}" "${CPB:?}" "${COPY_CONTENT:?}"
	mkdir -p "$ctx/bin"
	write_rootfs "$ctx/rootfs"
	cp "$OLM" "$ctx/bin/olm"
	cp "$CATALOG_OPERATOR" "$ctx/bin/catalog"
	cp "$CPB" "$ctx/bin/cpb"
	cp "$COPY_CONTENT" "$ctx/bin/copy-content"
	cp /bin/busybox "$ctx/bin/busybox"
	ln -s busybox "$ctx/bin/cp"
	for bin in olm catalog cpb copy-content busybox; do require_static "$ctx/bin/$bin"; done
	bud "$ctx" -f "$SCRIPT_DIR/olm.Containerfile" --platform linux/amd64 -t "$OLM_IMG"
	push_layout "$OLM_IMG" "$1"
}

inputs_coredns() { sums "$COREDNS"; }
# CoreDNS (its Dockerfile: the binary with cap_net_bind_service, user nonroot), the cluster DNS
# of the local cluster's real node (hack/cluster/services.sh).
build_coredns() {
	local ctx=$WORK/coredns
	: "${COREDNS_IMG:?}" "${COREDNS:?}"
	mkdir -p "$ctx"
	write_rootfs "$ctx/rootfs"
	cp "$COREDNS" "$ctx/coredns"
	require_static "$ctx/coredns"
	setcap cap_net_bind_service=+ep "$ctx/coredns"
	bud "$ctx" -f "$SCRIPT_DIR/coredns.Containerfile" --platform linux/amd64 -t "$COREDNS_IMG"
	push_layout "$COREDNS_IMG" "$1"
}

# ---------------------------------------------------------------------------------------------

# build_image NAME: builds NAME unless bin/images/NAME.inputs holds the hash of its inputs (and
# of this script and the Containerfiles). The layout is written beside and moved into place, and
# the hash written last, so that an interrupted build is built again.
build_image() {
	local name=$1 hash start
	hash=$({
		sums "$SCRIPT_DIR"/build.sh "$SCRIPT_DIR"/*.Containerfile
		buildah --version
		"inputs_$name"
	} | sha256sum | cut -d' ' -f1)
	if [[ -f $OUT/$name/index.json && -f $OUT/$name.inputs && $(<"$OUT/$name.inputs") == "$hash" ]]; then
		log "$name: up to date"
		return
	fi
	log "$name: building (${PUBLIC_NAMES[$name]})"
	start=$EPOCHREALTIME
	rm -rf "${WORK:?}/$name" "$OUT/$name.tmp" "$OUT/$name.inputs"
	"build_$name" "$OUT/$name.tmp"
	rm -rf "${OUT:?}/$name"
	mv "$OUT/$name.tmp" "$OUT/$name"
	echo "$hash" >"$OUT/$name.inputs"
	BUILT+=("$name")
	log "$name: built in $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s, $(du -sh "$OUT/$name" | cut -f1)"
}

# write_list: bin/images/images.list, "PUBLIC-NAME LAYOUT" for every image built so far, the
# layout a directory beside the list.
write_list() {
	local name public
	for name in "${ALL_IMAGES[@]}"; do
		[[ -f $OUT/$name/index.json ]] || continue
		for public in ${PUBLIC_NAMES[$name]}; do printf '%s %s\n' "$public" "$name"; done
	done >"$OUT/images.list.tmp"
	mv "$OUT/images.list.tmp" "$OUT/images.list"
}

main() {
	local name wanted=("$@")
	((${#wanted[@]})) || wanted=("${ALL_IMAGES[@]}")
	for name in "${wanted[@]}"; do
		[[ -v PUBLIC_NAMES[$name] ]] || die "unknown image $name (one of: ${ALL_IMAGES[*]})"
	done
	BUILT=()
	# In dependency order, whatever the order of the arguments.
	for name in "${ALL_IMAGES[@]}"; do
		if [[ " ${wanted[*]} " == *" $name "* ]]; then build_image "$name"; fi
	done
	write_list
	if ((${#BUILT[@]})); then
		"${BUILDAH[@]}" rm --all >/dev/null
		"${BUILDAH[@]}" rmi --all --force >/dev/null 2>&1 || true
		rm -rf "${WORK:?}"
	fi
	log "built: ${BUILT[*]:-nothing}; list: $OUT/images.list"
}

main "$@"
