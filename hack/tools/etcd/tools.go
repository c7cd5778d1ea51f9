//go:build tools

// Package etcd pins the etcd server used by the integration and end-to-end tests.
package etcd

import _ "go.etcd.io/etcd/server/v3"
