package main

import (
	"testing"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

func TestCreatedLate(t *testing.T) {
	l := newLedger()
	l.observeAt(write(""), at(0))
	l.observeAt(write("a1"), at(1))
	l.observeAt(write("", success("a", "a1", 5)), at(5)) // a1 recorded
	l.observeAt(write("b2"), at(6))
	l.observeAt(write(""), at(7)) // b2 withdrawn
	l.observeAt(write("c3"), at(8))
	l.observeAt(write(""), at(9)) // c3 withdrawn
	pods := []perfkit.PodLife{
		{Name: "a1", Group: "g", Created: at(1)},
		{Name: "b2", Group: "g", Created: at(9)},  // created 2 s after the withdrawal: counted
		{Name: "c3", Group: "g", Created: at(10)}, // within the second: not counted
		{Name: "d4", Group: "g", Created: at(20)}, // no end seen
	}
	if n := l.phantoms(map[string]bool{"a1": true, "b2": true, "c3": true}); n != 0 {
		t.Errorf("phantoms = %d; every recorded run had its pod", n)
	}
	l.observeAt(write("e5"), at(30))
	l.observeAt(write("", success("e", "e5", 31)), at(31)) // e5 recorded, its pod never seen
	if n := l.phantoms(map[string]bool{"a1": true, "b2": true, "c3": true}); n != 1 {
		t.Errorf("phantoms = %d, want 1 (e5)", n)
	}
	late := l.createdLate(pods)
	if len(late) != 1 || late[0][:len("group g: pod b2 ")] != "group g: pod b2 " {
		t.Errorf("late = %q, want b2 only", late)
	}
}
