// Package planner decides what one reconcile of an OaatGroup does. Decide is a pure function of
// a snapshot (Input: the group, its OaatType, its pods, its on-demand runs, its item sources and
// claims, its locks, a deleted group's history record), the time and a random source; the
// OaatGroup reconciler gathers the snapshot and applies the plan.
//
// The plan keeps these invariants:
//   - A run's intent (item and pod name in status.currentRun) is persisted before its pod is
//     created, and no pod is planned while any pod of the group is live, so at most one item pod
//     of a group is live at any instant.
//   - A finished run's outcome is recorded once: recording it clears status.currentRun, which is
//     the only key an outcome is recorded under.
//   - The finished pods kept of each item are those spec.podHistory asks for (absent: the latest);
//     the others are deleted together (Plan.DeleteBatch) once the group is idle or 8 of them
//     wait. The finished pods of an item removed from the group are deleted at once, each alone
//     (Plan.Delete), its status entry going with the last.
//
// The group's spec is read by internal/groupspec (the circuit breaker's part by breaker.go), and
// the facts of a pod (Terminal, RunNumber, Ended, Started, Disrupted, Gone, Tracked) are
// internal/podbuild's; this package exports only the planning types: Input, Plan and what a Plan
// holds, and the fallbacks.
package planner
