// Package perfkit holds what the benchmark (tests/perf/bench) and the chaos run
// (tests/perf/chaos) share: their knobs from the environment, a local cluster of their own with
// config/local applied, the manager run as a separate process with its ServiceAccount's token,
// the resource usage of a process read from /proc, Prometheus text scraped from the API server
// and the manager, a recorder of every pod's lifetime fed by a watch, percentiles, and the
// generated sections of docs/performance.md.
//
// Nothing here runs under go test: the programs are started by make bench and make chaos.
package perfkit
