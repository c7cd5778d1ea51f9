// Package history decides what of an item's history outlives its group: the record written when
// a group is deleted (Record), what a new group of the same namespace and name adopts of it
// (Adopt), and how a renamed item keeps its history (Rename). Its functions are pure: they read
// their inputs and the time they are given, and return values.
//
// The rule of adoption, in order:
//   - a record of another namespace or name, or of the group itself (same UID), is not the group's
//     predecessor: nothing is adopted and the record is left alone;
//   - a record expired at the time of the decision is adopted by no one: nothing is adopted and it
//     is deleted;
//   - a record of another OaatType is history of other work: nothing is adopted and it is
//     deleted;
//   - otherwise each item of the group that has no history of its own takes the record's entry
//     of the same name or, failing that, of the item it was renamed from (spec.itemRenames, whose
//     from is not an item of the group); an entry of an item the group no longer has is dropped;
//     the group's run count goes on from the record's; the record is deleted.
package history
