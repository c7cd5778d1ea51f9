#!/usr/bin/env bash
# Prints the public name of every image that `make images` built (bin/images/images.list), one a
# line; with --hosts, the registry hosts of those names (registry.k8s.io, docker.io, quay.io),
# for which the node's containerd needs a mirror.
#
# Usage: list.sh [--hosts]
#
# Environment: IMAGES_DIR   where the images are (default <repo>/bin/images)
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LIST=${IMAGES_DIR:-$SCRIPT_DIR/../../bin/images}/images.list
[[ -f $LIST ]] || { printf 'list: error: %s is missing: run make images first\n' "$LIST" >&2; exit 1; }

case ${1:-} in
"") cut -d' ' -f1 "$LIST" ;;
--hosts) cut -d' ' -f1 "$LIST" | cut -d/ -f1 | sort -u ;;
*) printf 'usage: list.sh [--hosts]\n' >&2; exit 2 ;;
esac
