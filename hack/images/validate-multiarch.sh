#!/usr/bin/env bash
# Runs operator-sdk's multiarch validator on ./bundle against the images that push.sh copied into
# REGISTRY. The validator shells out to a container tool (`podman pull IMAGE`, then `podman
# manifest inspect IMAGE`) for the CSV's images, by their public names: podman gets a
# registries.conf of its own (CONTAINERS_REGISTRIES_CONF) that mirrors each public registry host
# to REGISTRY/<host> over plain HTTP, and a throw-away vfs storage (CONTAINERS_STORAGE_CONF), so
# the machine's configuration and storage are left alone.
#
# Usage: validate-multiarch.sh REGISTRY [more `operator-sdk bundle validate` flags, e.g. -o json-alpha1]
#
# Environment: OPERATOR_SDK   the operator-sdk binary (make bundle-validate-multiarch sets it)
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
: "${OPERATOR_SDK:?the path of operator-sdk: run this through make bundle-validate-multiarch}"
(($# >= 1)) || { printf 'usage: validate-multiarch.sh REGISTRY [flags...]\n' >&2; exit 2; }
registry=$1
shift

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
	printf 'unqualified-search-registries = []\n'
	for host in $("$SCRIPT_DIR/list.sh" --hosts); do
		printf '\n[[registry]]\nprefix = "%s"\nlocation = "%s"\n[[registry.mirror]]\nlocation = "%s/%s"\ninsecure = true\n' \
			"$host" "$host" "$registry" "$host"
	done
} >"$tmp/registries.conf"
printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' "$tmp" "$tmp" >"$tmp/storage.conf"

cd "$REPO_ROOT"
CONTAINERS_REGISTRIES_CONF=$tmp/registries.conf CONTAINERS_STORAGE_CONF=$tmp/storage.conf \
	"$OPERATOR_SDK" bundle validate ./bundle --select-optional name=multiarch \
	--optional-values=container-tools=podman "$@"
