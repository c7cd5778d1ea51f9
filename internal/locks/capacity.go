package locks

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// Capacity is a lock's capacity at an instant, by spec.capacity and spec.capacitySchedule.
type Capacity struct {
	// InForce is the capacity then: the smallest capacity of the windows open then, spec.capacity
	// outside them.
	InForce int
	// NextAt is when the capacity in force changes next, zero when it does not within
	// changeSearchLimit (or the lock has no schedule); Next is the capacity from then on.
	NextAt time.Time
	Next   int
	// Err says that a window of the schedule could not be read (admission refuses what the
	// parser refuses, so only a lock written past admission has one): InForce is then the
	// smallest capacity the lock's spec names anywhere, and nothing changes.
	Err error
}

// changeSearchLimit is how far ahead CapacityAt looks for the next change: the windows repeat
// every week, so a change that comes at all comes within a week and a day.
const changeSearchLimit = 8 * 24 * time.Hour

// capacityWindow is a parsed window of spec.capacitySchedule.
type capacityWindow struct {
	window   schedule.Window
	capacity int
}

// CapacityAt is the lock's capacity at now and its next change.
func CapacityAt(lock v1alpha1.Lock, now time.Time) Capacity {
	windows, err := capacityWindows(lock.CapacityWindows())
	base := lock.CapacityOrDefault()
	if err != nil {
		lowest := base
		for _, w := range lock.CapacityWindows() {
			lowest = min(lowest, int(windowCapacity(w)))
		}
		return Capacity{InForce: lowest, Err: err}
	}
	c := Capacity{InForce: inForce(windows, base, now)}
	limit := now.Add(changeSearchLimit)
	for t := now; ; {
		next, ok := nextBoundary(windows, t)
		if !ok || next.After(limit) {
			return c
		}
		if capacity := inForce(windows, base, next); capacity != c.InForce {
			c.NextAt, c.Next = next, capacity
			return c
		}
		t = next
	}
}

// Status is the lock's status.capacityInForce and status.nextCapacityChange for c.
func (c Capacity) Status() v1alpha1.CapacityStatus {
	st := v1alpha1.CapacityStatus{CapacityInForce: ptr.To(int32(c.InForce))}
	if !c.NextAt.IsZero() {
		st.NextCapacityChange = &v1alpha1.CapacityChange{At: ptr.To(metav1.NewTime(c.NextAt)), Capacity: ptr.To(int32(c.Next))}
	}
	return st
}

// HighestCapacity is the most slots the lock's spec gives at any time: the largest of
// spec.capacity and the capacities of spec.capacitySchedule.
func HighestCapacity(lock v1alpha1.Lock) int {
	highest := lock.CapacityOrDefault()
	for _, w := range lock.CapacityWindows() {
		highest = max(highest, int(windowCapacity(w)))
	}
	return highest
}

// capacityWindows parses the schedule, naming the first window that cannot be read.
func capacityWindows(spec []v1alpha1.CapacityWindow) ([]capacityWindow, error) {
	out := make([]capacityWindow, 0, len(spec))
	for i, w := range spec {
		days := make([]string, len(w.Days))
		for j, d := range w.Days {
			days[j] = string(d)
		}
		window, err := schedule.ParseWindow(w.Start, w.End, days, string(w.TimeZone))
		if err == nil && w.Capacity == nil {
			err = errors.New("capacity is missing")
		}
		if err != nil {
			return nil, fmt.Errorf("spec.capacitySchedule[%d]: %w", i, err)
		}
		out = append(out, capacityWindow{window: window, capacity: int(*w.Capacity)})
	}
	return out, nil
}

// windowCapacity is the window's capacity, 0 when it has none.
func windowCapacity(w v1alpha1.CapacityWindow) int32 {
	if w.Capacity == nil {
		return 0
	}
	return *w.Capacity
}

// inForce is the capacity at t: the smallest of the windows open at t, base when none is.
func inForce(windows []capacityWindow, base int, t time.Time) int {
	capacity, open := base, false
	for _, w := range windows {
		if _, ok := w.window.Covering(t); ok {
			if !open || w.capacity < capacity {
				capacity, open = w.capacity, true
			}
		}
	}
	return capacity
}

// nextBoundary is the first instant after t at which a window opens or an open one closes; false
// when the schedule has no window.
func nextBoundary(windows []capacityWindow, t time.Time) (time.Time, bool) {
	var next time.Time
	found := false
	at := func(b time.Time) {
		if b.After(t) && (!found || b.Before(next)) {
			next, found = b, true
		}
	}
	for _, w := range windows {
		if end, ok := w.window.Covering(t); ok {
			at(end)
		}
		if start := w.window.NextStart(t); !start.IsZero() {
			at(start)
		}
	}
	return next, found
}
