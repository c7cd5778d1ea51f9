#!/usr/bin/env bash
# Fails when the work tree differs from what is committed: run by `make verify` after
# `make manifests generate fmt`, so a difference means generated code or manifests (or
# formatting) were not regenerated and committed. Untracked files under config/ and api/ fail
# too: they are generated files that were never added.
set -euo pipefail

cd "$(git rev-parse --show-toplevel)"

status=0

if ! git diff --quiet --exit-code; then
	echo "Stale generated or unformatted files: run 'make manifests generate fmt api-docs' and commit these:" >&2
	git diff --name-only | sed 's/^/  /' >&2
	echo >&2
	git --no-pager diff --stat >&2
	echo "First lines of the difference:" >&2
	git --no-pager diff | head -n 200 >&2 || true
	status=1
fi

untracked="$(git ls-files --others --exclude-standard -- config api)"
if [ -n "${untracked}" ]; then
	echo "Untracked files under config/ or api/: add them to git or delete them:" >&2
	printf '%s\n' "${untracked}" | sed 's/^/  /' >&2
	status=1
fi

if [ "${status}" -eq 0 ]; then
	echo "Generated code and manifests are up to date."
fi
exit "${status}"
