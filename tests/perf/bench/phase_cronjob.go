package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// cronControllers are the controllers of kube-controller-manager that run CronJobs.
var cronControllers = map[string]bool{"cronjob-controller": true, "job-controller": true}

// cronJobPhase runs CronJobs every minute for cronMinutes scheduled minutes, with no operator
// running. Each CronJob is one item: concurrencyPolicy Forbid (one run at a time), and the last
// finished Job kept (successfulJobsHistoryLimit 1), as the operator keeps each item's last pod.
func (b *bench) cronJobPhase(ctx context.Context) error {
	cfg := b.cfg
	const ns = "bench-cronjob"
	b.rep.Printf("\n## Baseline: %d CronJobs (schedule every minute, Forbid, history 1), runs of %s, %d scheduled minutes, no operator",
		cfg.cronJobs, cfg.cronRun, cfg.cronMinutes)
	if err := b.env.Namespace(ctx, ns); err != nil {
		return err
	}
	start, err := b.read(ctx)
	if err != nil {
		return err
	}
	var objs []client.Object
	for i := range cfg.cronJobs {
		objs = append(objs, newCronJob(ns, "cj-"+strconv.Itoa(i), perfkit.PodTemplate(cfg.cronRun.String(), "0")))
	}
	if err := perfkit.CreateAll(ctx, b.env.Client, objs); err != nil {
		return err
	}
	first := time.Now().Truncate(time.Minute).Add(time.Minute)
	last := first.Add(time.Duration(cfg.cronMinutes-1) * time.Minute)
	want := cfg.cronJobs * cfg.cronMinutes
	scheduledRuns := func() []perfkit.PodLife {
		var runs []perfkit.PodLife
		for _, p := range b.pods.Pods(ns) {
			if at, ok := scheduledAt(p.JobName); ok && !at.After(last) {
				runs = append(runs, p)
			}
		}
		return runs
	}
	// Until every scheduled run has ended and the controllers have recorded it; the end comes
	// before the next scheduled minute, so that no further run is counted.
	ended := perfkit.WaitFor(ctx, time.Until(last.Add(50*time.Second)), func() bool {
		runs := scheduledRuns()
		return len(runs) == want && countLive(runs) == 0
	})
	if err := perfkit.Sleep(ctx, max(time.Until(last.Add(cfg.cronRun+15*time.Second)), 0)); err != nil {
		return err
	}
	end, err := b.read(ctx)
	if err != nil {
		return err
	}
	runs := scheduledRuns()
	if !ended {
		b.rep.Printf("  note: %d of %d scheduled runs seen, %d still live at the end", len(runs), want, countLive(runs))
	}
	var precision perfkit.Latencies
	for _, p := range runs {
		at, _ := scheduledAt(p.JobName)
		precision = append(precision, p.SeenCreated.Sub(at))
	}
	b.results.cronPrecision = precision
	b.rep.Printf("  runs: %d; start precision (scheduled minute to the Job's pod): %s", len(runs), precision.Summary())
	return b.reportCronWrites(ctx, ns, between(start, end), len(runs))
}

// reportCronWrites prints the writes per run of the CronJob and Job controllers (jobs, cronjob
// status, pods but their status and binding, their own events) and of the whole workload.
func (b *bench) reportCronWrites(ctx context.Context, ns string, iv interval, runs int) error {
	events := &corev1.EventList{}
	if err := b.env.Client.List(ctx, events, client.InNamespace(ns)); err != nil {
		return err
	}
	var controllerEvents float64
	for _, e := range events.Items {
		if cronControllers[e.Source.Component] || cronControllers[e.ReportingController] {
			n := max(e.Count, 1)
			if e.Series != nil {
				n = max(n, e.Series.Count)
			}
			controllerEvents += float64(n)
		}
	}
	controller := iv.api.Count(func(k perfkit.RequestKey) bool {
		switch {
		case !k.Write() || k.Failed:
			return false
		case k.Resource == "jobs":
			return true
		case k.Resource == "cronjobs":
			return k.Subresource == "status"
		case k.Resource == "pods":
			return k.Subresource == ""
		}
		return false
	}) + controllerEvents
	b.results.cronWritesPerRun = perfkit.PerRun(controller, runs)
	b.results.cronTotalPerRun = perfkit.PerRun(iv.api.Count(workload), runs)
	b.rep.Printf("  CronJob and Job controller writes per run: %.2f (jobs, cronjobs/status, pods but status and binding, and %.0f events of theirs)",
		b.results.cronWritesPerRun, controllerEvents)
	b.rep.Printf("  all workload writes per run (with the scheduler and kwok as kubelet): %.2f; by request:\n%s",
		b.results.cronTotalPerRun, perfkit.Indent("    ", iv.api.WriteTable(workload, runs)))
	b.reportFailedWrites(iv)
	return b.deleteNamespace(ctx, ns)
}

// newCronJob returns a CronJob that runs the pod template every minute, never two at once.
func newCronJob(ns, name string, template corev1.PodTemplateSpec) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1.CronJobSpec{
			Schedule:                   "* * * * *",
			ConcurrencyPolicy:          batchv1.ForbidConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](1),
			FailedJobsHistoryLimit:     ptr.To[int32](1),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To[int32](0),
				Template:     template,
			}},
		},
	}
}

// scheduledAt reads the scheduled time of a CronJob's Job from its name, <cronjob>-<minutes since
// the epoch>, as the CronJob controller names it.
func scheduledAt(jobName string) (time.Time, bool) {
	i := strings.LastIndexByte(jobName, '-')
	if i < 0 {
		return time.Time{}, false
	}
	minutes, err := strconv.ParseInt(jobName[i+1:], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(minutes*60, 0), true
}

// ratio formats a/b, or "n/a" when b is 0.
func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1fx", a/b)
}
