// Package reconcile proves that every event appended to the event table
// was projected and archived, and heals what was not.
//
// Reconcile reads the events recorded (recordedat) in a window [From, To)
// with a parallel, eventually consistent Scan of the event table, and for
// each event asks:
//
//   - the projector: is it applied? projector.Projector.Check folds it into
//     its subject's stored state; a join changes nothing exactly when the
//     event is already in it (docs/projector.md, "Reconcile's evidence").
//     Late and dead-lettered events (by the projector's own rules) are
//     counted, not gaps.
//   - the archive: does the archive's table of its domain hold a row with
//     its (subject, id) on its event date, with the same content hash? No
//     row is a missing-archive gap; only rows with another hash are a
//     conflict. Archived events recorded in the window that the table no
//     longer holds are counted as archive-only (informational).
//
// The result is reported per domain and event day (opsrec.Result, rows
// opsrec.DayGaps) with every gap id (Report.IDs), and recorded in the
// checkpoints table when Config.Ops is set.
//
// Contracts:
//
//   - Read-only unless Options.Heal: the event table, the aggregate states
//     and the archive are only read. The result record (Config.Ops) is the
//     one write.
//   - Safe while the consumers run: events recorded in the last
//     Options.Settle (default 2 minutes) are left to them, and every event
//     not found applied is judged again from a strongly consistent read of
//     its state, so a commit in flight is not reported as a gap.
//   - Memory is bounded, whatever the window: the scan holds at most
//     Segments × ChunkEvents events (default 4 × 1,000) and spills each
//     event's (subject, id, content hash) to temporary files per archive
//     table and event date (Options.TempDir); the archive comparison then
//     holds at most about BucketEvents of them at once (default 200,000,
//     some 60 MB), splitting a larger date into buckets by key, the
//     archive's references of that date likewise, and comparing bucket by
//     bucket. What grows with the window is disk (some 120 bytes per
//     event) and the gap ids (held in memory: the gaps, not the events).
//   - Heal is idempotent and never double counts: the missing events are
//     read back from the event table and fed through the consumers' own
//     paths, the projector's Project (a join, its commits version-checked:
//     an event applied meanwhile changes nothing) and Archive.Heal (which
//     writes only what the archive does not hold). Running it again, or
//     beside the consumers, changes nothing more. After healing, the healed
//     events are checked again: DayGaps.Healed counts those found applied
//     (archived), and the gap counts are what remains.
//   - Conflicts are never healed: the archive holds other content under the
//     event's id, which a person must look at.
package reconcile
