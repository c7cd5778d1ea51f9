#!/usr/bin/env bash
# Copies every image that `make images` built (bin/images/images.list) into a plain-HTTP registry
# under its public name as a path: REGISTRY/quay.io/oaat-io/oaat-operator:v0.3.0,
# REGISTRY/registry.k8s.io/pause:3.10.2, ... A containerd mirror for each public registry host
# (hosts.toml: [host."http://REGISTRY/v2/quay.io"] with override_path = true) then resolves the
# public names there. Manifest lists are copied whole (every platform), digests unchanged.
#
# Usage: push.sh REGISTRY [PUBLIC-NAME...]   REGISTRY is host:port; default: every image
#
# Environment: IMAGES_DIR   where the images are (default <repo>/bin/images)
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IMAGES_DIR=${IMAGES_DIR:-$SCRIPT_DIR/../../bin/images}
LIST=$IMAGES_DIR/images.list

die() { printf 'push: error: %s\n' "$*" >&2; exit 1; }

(($# >= 1)) || die "usage: push.sh REGISTRY [PUBLIC-NAME...]"
registry=$1
shift
[[ -f $LIST ]] || die "$LIST is missing: run 'make images' first"

pushed=0
while read -r public layout; do
	if (($#)) && [[ " $* " != *" $public "* ]]; then continue; fi
	skopeo copy --quiet --all --preserve-digests --dest-tls-verify=false \
		"oci:$IMAGES_DIR/$layout" "docker://$registry/$public"
	printf 'push: %s/%s\n' "$registry" "$public" >&2
	pushed=$((pushed + 1))
done <"$LIST"
((pushed > 0)) || die "nothing to push (asked for: ${*:-every image}; $LIST lists $(wc -l <"$LIST"))"
