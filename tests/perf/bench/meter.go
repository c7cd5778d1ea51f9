package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// reading is what the meter reads at the start and the end of a measured interval.
type reading struct {
	at  time.Time
	api perfkit.Requests
	op  perfkit.Samples // nil when no manager runs
	cpu time.Duration
}

// read reads the API server's request counters and, when the manager runs, its metrics and CPU.
func (b *bench) read(ctx context.Context) (reading, error) {
	r := reading{at: time.Now()}
	var err error
	if r.api, err = perfkit.APIRequests(ctx, b.env.Clientset); err != nil {
		return r, err
	}
	if b.manager == nil || !b.manager.Running() {
		return r, nil
	}
	if r.op, err = b.manager.Metrics(ctx); err != nil {
		return r, err
	}
	u, err := b.manager.Usage()
	if err != nil {
		return r, err
	}
	r.cpu = u.CPU
	return r, nil
}

// interval is what happened between two readings of one manager process.
type interval struct {
	elapsed time.Duration
	api     perfkit.Requests
	// opWrites and opReads are the manager's own write and read (GET: a get, a list or a watch)
	// requests (its client's rest_client_requests_total).
	opWrites, opReads float64
	// cpu is the manager's CPU time.
	cpu time.Duration
	// reconciles, reconcileTime and queueWait are the manager's reconciles, their mean duration
	// and the mean wait of a request in its work queue.
	reconciles               float64
	reconcileTime, queueWait time.Duration
}

func between(start, end reading) interval {
	iv := interval{elapsed: end.at.Sub(start.at), api: end.api.Since(start.api), cpu: end.cpu - start.cpu}
	if start.op == nil || end.op == nil {
		return iv
	}
	delta := func(name string, match map[string]string) float64 {
		return end.op.Sum(name, match) - start.op.Sum(name, match)
	}
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		iv.opWrites += delta("rest_client_requests_total", map[string]string{"method": m})
	}
	iv.opReads = delta("rest_client_requests_total", map[string]string{"method": "GET"})
	ctrl := map[string]string{"controller": "oaatgroup"}
	iv.reconciles = delta("controller_runtime_reconcile_time_seconds_count", ctrl)
	iv.reconcileTime = mean(delta("controller_runtime_reconcile_time_seconds_sum", ctrl), iv.reconciles)
	queue := map[string]string{"name": "oaatgroup"}
	iv.queueWait = mean(delta("workqueue_queue_duration_seconds_sum", queue), delta("workqueue_queue_duration_seconds_count", queue))
	return iv
}

func mean(seconds, n float64) time.Duration {
	if n == 0 {
		return 0
	}
	return time.Duration(seconds / n * float64(time.Second))
}

// benchOwn reports the writes the benchmark itself makes: creating its objects.
func benchOwn(k perfkit.RequestKey) bool {
	if k.Verb != "POST" {
		return false
	}
	switch k.Resource {
	case "oaatgroups", "oaattypes", "oaatlocks", "cronjobs", "namespaces":
		return k.Subresource == ""
	}
	return false
}

// workload reports the writes of the workload: all but the background and the benchmark's own.
func workload(k perfkit.RequestKey) bool { return perfkit.WorkloadWrites(k) && !benchOwn(k) }

// reportOperatorWrites prints the operator's writes per finished run and returns them, with the
// workload's writes per run (the operator's, the scheduler's and kwok's, which plays the
// kubelet). The operator's are counted by the API server: its status writes, pod creations,
// deletions and finalizer removals (the only pods PATCH: kwok patches pods/status), and its events: all events but the scheduler's, one per pod it binds. Its own
// client's count of write requests is printed as a cross-check (an event sent after the end of
// the interval is not in the API server's count).
func (b *bench) reportOperatorWrites(iv interval, runs int) (operator, total float64) {
	w := operatorWrites(iv.api).perRun(runs)
	operator = w.total()
	total = perfkit.PerRun(iv.api.Count(workload), runs)
	b.rep.Printf("  operator writes per finished run: %.2f (target <= 4) = status %.2f + pod create %.2f + pod finalizer %.2f + pod delete %.2f + events %.2f; its client counted %.2f",
		operator, w.groupStatus, w.podCreate, w.podPatch, w.podDelete, w.events, perfkit.PerRun(iv.opWrites, runs))
	b.rep.Printf("  all workload writes per finished run (operator, scheduler, kwok as kubelet): %.2f; by request:\n%s",
		total, perfkit.Indent("    ", iv.api.WriteTable(workload, runs)))
	b.reportFailedWrites(iv)
	b.rep.Printf("  all API requests per finished run, reads included (every client: the operator, the scheduler, kwok, the controller-manager, the benchmark's watches; the writes of nodes and leases left out), by request; the operator's client counted %.2f reads (GET, LIST, WATCH) and %.2f writes:\n%s",
		perfkit.PerRun(iv.opReads, runs), perfkit.PerRun(iv.opWrites, runs), perfkit.Indent("    ", iv.api.WriteTable(workloadRequests, runs)))
	return operator, total
}

// workloadRequests reports the successful requests of the workload, reads included: all but the
// background's writes and the benchmark's own. The reads of Leases stay: the operator reads its
// Lease before each pod it creates (the components' own leader election reads theirs too, every
// few seconds whatever runs).
func workloadRequests(k perfkit.RequestKey) bool {
	return !k.Failed && !benchOwn(k) && (!perfkit.Background(k) || (k.Resource == "leases" && !k.Write()))
}

// reportFailedWrites lists the write requests that failed, which the counts per run leave out:
// a conflict costs a request but changes nothing.
func (b *bench) reportFailedWrites(iv interval) {
	if failed := iv.api.WriteTable(perfkit.FailedWrites, 0); len(failed) > 0 {
		b.rep.Printf("  failed write requests (not in the counts above):\n%s", perfkit.Indent("    ", failed))
	}
}

// describeManager prints the manager's CPU and its controller's work over the interval.
func (b *bench) describeManager(iv interval) {
	load, _ := os.ReadFile("/proc/loadavg")
	b.rep.Printf("  manager CPU: %.2f cores on average (%s over %s); %0.f reconciles, mean %s each, mean work queue wait %s; machine load average now %s",
		iv.cpu.Seconds()/iv.elapsed.Seconds(), iv.cpu.Round(10*time.Millisecond), iv.elapsed.Round(time.Second),
		iv.reconciles, iv.reconcileTime.Round(time.Microsecond), iv.queueWait.Round(time.Microsecond),
		strings.Join(strings.Fields(string(load))[:3], " "))
}

// opWrites are the operator's successful writes, by what they write, counted by the API server.
type opWrites struct {
	groupStatus, lockStatus, podCreate, podPatch, podDelete, events float64
}

// operatorWrites picks the operator's writes out of the API server's requests: its status writes
// of groups and locks, pod creations and deletions, and its events: all events but the
// scheduler's, one per pod it binds.
func operatorWrites(api perfkit.Requests) opWrites {
	return opWrites{
		groupStatus: api.Get("oaatgroups", "status", "PUT") + api.Get("oaatgroups", "status", "PATCH"),
		lockStatus:  api.Get("oaatlocks", "status", "PUT") + api.Get("oaatlocks", "status", "PATCH"),
		podCreate:   api.Get("pods", "", "POST"),
		podPatch:    api.Get("pods", "", "PATCH"),
		podDelete:   api.Get("pods", "", "DELETE"),
		events:      api.Get("events", "", "POST") + api.Get("events", "", "PATCH") - api.Get("pods", "binding", "POST"),
	}
}

func (w opWrites) total() float64 {
	return w.groupStatus + w.lockStatus + w.podCreate + w.podPatch + w.podDelete + w.events
}

// perRun divides every count by runs (0 when there were none).
func (w opWrites) perRun(runs int) opWrites {
	return opWrites{
		groupStatus: perfkit.PerRun(w.groupStatus, runs), lockStatus: perfkit.PerRun(w.lockStatus, runs),
		podCreate: perfkit.PerRun(w.podCreate, runs), podPatch: perfkit.PerRun(w.podPatch, runs),
		podDelete: perfkit.PerRun(w.podDelete, runs),
		events:    perfkit.PerRun(w.events, runs),
	}
}

// minus is w less other, part by part.
func (w opWrites) minus(other opWrites) opWrites {
	return opWrites{
		groupStatus: w.groupStatus - other.groupStatus, lockStatus: w.lockStatus - other.lockStatus,
		podCreate: w.podCreate - other.podCreate, podPatch: w.podPatch - other.podPatch,
		podDelete: w.podDelete - other.podDelete,
		events:    w.events - other.events,
	}
}

// String is the total and its parts.
func (w opWrites) String() string { return w.format("%.2f") }

// signed is the total and its parts with their signs, for a difference.
func (w opWrites) signed() string { return w.format("%+.2f") }

func (w opWrites) format(number string) string {
	return fmt.Sprintf(strings.ReplaceAll(number+" = group status #, lock status #, pod create #, pod finalizer #, pod delete #, events #", "#", number),
		w.total(), w.groupStatus, w.lockStatus, w.podCreate, w.podPatch, w.podDelete, w.events)
}
