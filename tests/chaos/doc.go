// Package chaos checks that the controller's object API is linearizable
// while real kcore-controller processes (tests/proccluster) are killed,
// restarted, paused and resumed on a seeded random schedule.
//
// Clients record every operation they make (put, CAS put, delete,
// leader-confirmed read, stale read) with its invoke and return times and
// its outcome: ok, fail (a definite refusal such as a CAS conflict) or
// unknown (a timeout or lost answer, which may or may not have been
// applied). Check hands the history to porcupine with a per-key register
// model whose CAS compares the write a ModifyIndex names; stale reads are
// left out of the linearizability check and held to a weaker one (they
// return a value some write wrote). A failing check writes the history as
// JSON and porcupine's HTML visualization into a directory its error
// names (CHAOS_OUT, else a new temporary directory that is kept).
//
// Run executes one seeded run and also checks the cluster's invariants:
// at most one election won per raft term (from the replicas' logs), no
// acknowledged write lost once every fault healed (final leader-confirmed
// reads of every key are part of the checked history), and every replica
// converged on the same state. CHAOS_SEED reproduces a run; CHAOS_RUNS
// sets how many runs TestChaos makes (make chaos).
package chaos
