//go:build tools

// Package kwok pins kwok, which simulates nodes and pod lifecycles on the local cluster.
package kwok

import _ "sigs.k8s.io/kwok/cmd/kwok"
