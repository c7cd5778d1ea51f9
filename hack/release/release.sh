#!/usr/bin/env bash
# Assembles a release of oaat-operator into DIST (make release; docs/development.md#releasing):
# the images make images built (operator, bundle, catalog) as OCI archives, the install files
# pinned to the operator image's digest, the Helm chart generated from them, the plugin's archives
# and krew manifest (make krew-manifest), the SBOMs, the release notes, SHA256SUMS and the
# signatures; then, with REGISTRY, pushes the images there with their digests kept.
#
# Usage: release.sh preflight   refuse a dirty tree (unless RELEASE_ALLOW_DIRTY=1) or a VERSION
#                               without its CHANGELOG.md section, before anything is built
#        release.sh assemble    write DIST (emptied first)
#        release.sh previous    write the previous release's install files and chart into DIST
#                               (emptied first), from PREVIOUS_COMMIT's tree
#
# Environment (make release sets it): VERSION, IMG, BUNDLE_IMG, CATALOG_IMG, IMAGES_DIR, KREW_DIR,
# DIST, KUSTOMIZE, CYCLONEDX_GOMOD; REGISTRY (host:port, plain HTTP) to push to; RELEASE_GPG_KEY,
# the fingerprint of the maintainer's key in their GnuPG keyring, else a throw-away key is made
# for this run and deleted at its end.
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO_ROOT"

log() { printf 'release: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# release_notes prints CHANGELOG.md's section "## VERSION", without its heading and the blank
# lines around it.
release_notes() {
	awk -v v="$VERSION" '/^## / { if (on) exit; on = ($2 == v); next } on' CHANGELOG.md |
		sed -e '/./,$!d' | tac | sed -e '/./,$!d' | tac
}

preflight() {
	: "${VERSION:?}"
	if [[ -n $(git status --porcelain) ]]; then
		if [[ ${RELEASE_ALLOW_DIRTY:-} != 1 ]]; then
			git status --short >&2
			die "the tree has changes: a release is built from a commit. Commit them, or set RELEASE_ALLOW_DIRTY=1 for a development build (its images carry the revision of HEAD, which does not hold them)"
		fi
		log "WARNING: RELEASE_ALLOW_DIRTY=1: building from a tree with uncommitted changes; this is not a release of revision $(git rev-parse --short HEAD)"
	fi
	[[ -n $(release_notes) ]] || die "CHANGELOG.md has no section '## $VERSION' (or it is empty): write the release notes first"
}

# min_kube_version ROOT: the oldest Kubernetes the release of the tree ROOT supports, its CSV's
# minKubeVersion.
min_kube_version() {
	awk '$1 == "minKubeVersion:" { print $2; exit }' "$1/config/manifests/bases/oaat-operator.clusterserviceversion.yaml"
}

# package_config ROOT VERSION IMAGE [CHARTGEN-FLAG...]: the install files of the tree ROOT's
# config/ (install.yaml, and install-namespace.yaml when it has config/namespaced), the operator
# image IMAGE (by digest), and the Helm chart generated from the same objects (hack/chartgen,
# passed the flags), archived as helm package would, but reproducibly: entries sorted, dated
# SOURCE_DATE_EPOCH, no name or time in the gzip header. All into DIST.
package_config() {
	local root=$1 version=$2 image=$3 config chart
	shift 3
	config=$(mktemp -d)
	cp -r "$root/config" "$config/"
	(cd "$config/config/manager" && "$KUSTOMIZE" edit set image "controller=$image")
	"$KUSTOMIZE" build "$config/config/default" >"$DIST/install.yaml"
	if [[ -d $config/config/namespaced ]]; then
		"$KUSTOMIZE" build "$config/config/namespaced" >"$DIST/install-namespace.yaml"
	fi
	chart=$(mktemp -d)
	"$KUSTOMIZE" build "$config/config/chart" >"$chart/monitoring.yaml"
	go run ./hack/chartgen -version "$version" -kube-version "$(min_kube_version "$root")" \
		-install "$DIST/install.yaml" -monitoring "$chart/monitoring.yaml" -out "$chart" "$@"
	tar -C "$chart" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
		-cf - oaat-operator | gzip -n -9 >"$DIST/oaat-operator-$version.tgz"
	rm -rf "$config" "$chart"
}

# digest LAYOUT: the digest of the one image (or manifest list) of an OCI layout.
digest() {
	[[ $(jq '.manifests | length' "$1/index.json") == 1 ]] || die "$1 holds more than one image"
	jq -r '.manifests[0].digest' "$1/index.json"
}

# blob LAYOUT DIGEST: the file of a blob of the layout.
blob() { printf '%s/blobs/%s' "$1" "${2/://}"; }

# archive LAYOUT FILE: the layout as an oci-archive, a tar whose entries are sorted and dated
# SOURCE_DATE_EPOCH, owned by root: the same layout gives the same bytes.
archive() {
	tar -C "$1" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
		-cf "$2" oci-layout index.json blobs
}

# extract LAYOUT OS/ARCH PATH OUT: copies the file PATH (relative to /) of the layout's image for
# that platform to OUT.
extract() {
	local layout=$1 os=${2%/*} arch=${2#*/} path=$3 out=$4 manifest layer
	manifest=$(jq -r --arg os "$os" --arg arch "$arch" \
		'.manifests[] | select(.platform.os == $os and .platform.architecture == $arch) | .digest' \
		"$(blob "$layout" "$(digest "$layout")")")
	[[ -n $manifest ]] || die "$layout has no image for $2"
	for layer in $(jq -r '.layers[].digest' "$(blob "$layout" "$manifest")"); do
		if tar -xf "$(blob "$layout" "$layer")" -O "$path" >"$out" 2>/dev/null; then return; fi
	done
	die "no $path in $layout's image for $2"
}

# sign_images: a detached "simple signing" signature of each image (skopeo standalone-sign, GnuPG):
# DIST/ARCHIVE.sig signs the digest of its top-level manifest under the image's public name.
sign_images() {
	local public digest archive
	while read -r public digest archive; do
		skopeo standalone-sign "$(blob "$IMAGES_DIR/${LAYOUTS[$public]}" "$digest")" "$public" "$SIGNING_KEY" \
			-o "$DIST/$archive.sig"
	done <"$DIST/images.txt"
}

# with_signing_key COMMAND...: runs COMMAND with SIGNING_KEY set: RELEASE_GPG_KEY, or a key made
# for this run in a keyring of its own, which is deleted afterwards (never in the tree).
with_signing_key() {
	if [[ -n ${RELEASE_GPG_KEY:-} ]]; then
		SIGNING_KEY=$RELEASE_GPG_KEY "$@"
		return
	fi
	local home status=0
	home=$(mktemp -d)
	export GNUPGHOME=$home
	gpg --batch --quiet --passphrase '' --quick-gen-key "oaat-operator release v$VERSION (throw-away key of one build)" \
		ed25519 sign 1d 2>/dev/null
	SIGNING_KEY=$(gpg --with-colons --list-secret-keys | awk -F: '$1 == "fpr" { print $10; exit }')
	log "signing with a throw-away key made for this build: $SIGNING_KEY"
	SIGNING_KEY=$SIGNING_KEY "$@" || status=$?
	gpgconf --kill gpg-agent
	rm -rf "$home"
	unset GNUPGHOME
	return "$status"
}

sign() {
	sign_images
	gpg --batch --yes --local-user "$SIGNING_KEY" --armor --detach-sign -o "$DIST/SHA256SUMS.asc" "$DIST/SHA256SUMS"
	gpg --batch --armor --export "$SIGNING_KEY" >"$DIST/signing-key.asc"
}

# push: each image to REGISTRY/PUBLIC-NAME, its digest kept, then read back from the registry.
push() {
	local public digest archive got
	while read -r public digest archive; do
		skopeo copy --quiet --all --preserve-digests --dest-tls-verify=false \
			"oci-archive:$DIST/$archive" "docker://$REGISTRY/$public"
		got=sha256:$(skopeo inspect --raw --tls-verify=false "docker://$REGISTRY/$public" | sha256sum | cut -d' ' -f1)
		[[ $got == "$digest" ]] || die "$REGISTRY/$public has the digest $got, not the archive's $digest"
		log "pushed $REGISTRY/$public@$digest"
	done <"$DIST/images.txt"
}

assemble() {
	: "${VERSION:?}" "${IMG:?}" "${BUNDLE_IMG:?}" "${CATALOG_IMG:?}" "${IMAGES_DIR:?}" "${KREW_DIR:?}" "${DIST:?}"
	: "${KUSTOMIZE:?}" "${CYCLONEDX_GOMOD:?}" "${SOURCE_DATE_EPOCH:?}"
	rm -rf "$DIST"
	mkdir -p "$DIST"
	DIST=$(cd "$DIST" && pwd)
	release_notes >"$DIST/RELEASE-NOTES.md"

	# The images, and images.txt: "PUBLIC-NAME DIGEST ARCHIVE" a line.
	declare -gA LAYOUTS=([$IMG]=operator [$BUNDLE_IMG]=bundle [$CATALOG_IMG]=catalog)
	local public name archive
	for public in "$IMG" "$BUNDLE_IMG" "$CATALOG_IMG"; do
		name=${public%:*}
		archive=${name##*/}-v$VERSION.oci.tar
		archive "$IMAGES_DIR/${LAYOUTS[$public]}" "$DIST/$archive"
		printf '%s %s %s\n' "$public" "$(digest "$IMAGES_DIR/${LAYOUTS[$public]}")" "$archive"
	done >"$DIST/images.txt"

	# The install files and the Helm chart, the operator image named by its digest.
	package_config "$REPO_ROOT" "$VERSION" "${IMG%:*}@$(digest "$IMAGES_DIR/operator")"

	# The plugin's archives and krew manifest (make krew-manifest).
	cp "$KREW_DIR"/kubectl-oaat_v"$VERSION"_*.tar.gz "$KREW_DIR/oaat.yaml" "$DIST/"

	# The SBOMs, of the binaries shipped: the manager of the linux/amd64 image, the plugin of the
	# linux/amd64 archive (the other platforms' are built from the same modules).
	local bins
	bins=$(mktemp -d)
	extract "$IMAGES_DIR/operator" linux/amd64 manager "$bins/manager"
	tar -xzf "$DIST/kubectl-oaat_v${VERSION}_linux_amd64.tar.gz" -C "$bins" kubectl-oaat
	"$CYCLONEDX_GOMOD" bin -json -noserial -notimestamp -version "v$VERSION" -output "$DIST/oaat-operator-v$VERSION.manager.cdx.json" "$bins/manager"
	"$CYCLONEDX_GOMOD" bin -json -noserial -notimestamp -version "v$VERSION" -output "$DIST/kubectl-oaat-v$VERSION.cdx.json" "$bins/kubectl-oaat"
	rm -rf "$bins"

	# What the signatures and the public key are not part of: they differ at each signing.
	(cd "$DIST" && sha256sum -- * >SHA256SUMS)
	with_signing_key sign
	if [[ -n ${REGISTRY:-} ]]; then push; fi
	log "$DIST:"
	ls -l "$DIST" >&2
}

# previous: the previous release's install files and Helm chart, packaged by this tooling from
# its commit's tree (PREVIOUS_COMMIT), its operator image (make images IMAGES=previous-operator)
# by digest, into DIST: what the upgrade tests start from (tests/realnode). That tree predates
# config/chart, which this tree's places its config/prometheus as config/default does; the
# chart's gated objects it lacks are PREVIOUS_CHART_ABSENT (chartgen -absent).
previous() {
	: "${PREVIOUS_VERSION:?}" "${PREVIOUS_COMMIT:?}" "${PREVIOUS_IMG:?}" "${IMAGES_DIR:?}" "${DIST:?}"
	: "${KUSTOMIZE:?}" "${SOURCE_DATE_EPOCH:?}"
	local src gated flags=()
	rm -rf "$DIST"
	mkdir -p "$DIST"
	DIST=$(cd "$DIST" && pwd)
	src=$(mktemp -d)
	git archive "$PREVIOUS_COMMIT" | tar -x -C "$src"
	if [[ ! -d $src/config/chart ]]; then
		cp -r config/chart "$src/config/"
	fi
	for gated in ${PREVIOUS_CHART_ABSENT:-}; do flags+=(-absent "$gated"); done
	package_config "$src" "$PREVIOUS_VERSION" "${PREVIOUS_IMG%:*}@$(digest "$IMAGES_DIR/previous-operator")" "${flags[@]}"
	rm -rf "$src"
	log "$DIST:"
	ls -l "$DIST" >&2
}

case ${1:-} in
preflight | assemble | previous) "$1" ;;
*) die "usage: release.sh preflight|assemble|previous" ;;
esac
