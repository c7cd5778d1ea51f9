package locks

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkDecide measures the review of a lock of capacity 1 held by one run, with waiters
// requests: all at the default priority, or every other one of priority 5 with every request of
// priority 0 passed over once (the worst the lock's status.passedOver holds for them).
func BenchmarkDecide(b *testing.B) {
	for _, waiters := range []int{100, 1000} {
		for _, prioritized := range []bool{false, true} {
			l := honouring(5, holder("run", "run-1"))
			ms := []Member{grp("run").running("run-1").m()}
			for i := range waiters {
				m := grp(fmt.Sprintf("g%04d", i)).requesting(time.Duration(i)*time.Second, fmt.Sprintf("g%04d-1", i))
				if prioritized && i%2 == 1 {
					m = m.priority(5)
				}
				if prioritized && i%2 == 0 {
					l.Status.PassedOver = append(l.Status.PassedOver, passedEntry(m.Name, time.Duration(i)*time.Second, 1))
				}
				ms = append(ms, m.m())
			}
			in := reviewOf(l, ms)
			b.Run(fmt.Sprintf("waiters=%d/priority=%v", waiters, prioritized), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if r := Decide(in); len(r.Holders) != 1 {
						b.Fatalf("holders %v", r.Holders)
					}
				}
			})
		}
	}
}
