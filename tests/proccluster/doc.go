// Package proccluster runs a real controller cluster for tests: Cluster
// starts N kcore-controller processes on loopback (ports they pick
// themselves, one t.TempDir data dir and PKI dir each, certificates from
// pkg/pki through pkg/ctlproc) and offers the faults only a process has:
// Kill (SIGKILL), Restart (same data dir and addresses), Pause and Resume
// (SIGSTOP, SIGCONT), and membership changes: Remove (out of the raft
// configuration, then killed) and Rejoin (empty, through --join). With
// Options.Netns (root) every replica runs in a network namespace of its
// own, veth'd into a bridge the cluster makes (names start with
// NamePrefix, addresses from a free 10.x.y.0/24), and PartitionOneWay,
// Partition, Isolate and Heal drop packets between replicas with
// nftables; the namespaces and the bridge are removed when the test ends.
// Leader, WaitCaughtUp and Client speak the HTTP API, as kctl and the
// agents do.
//
// The binary is KCORE_CONTROLLER_BIN when set, else built once per test
// binary (call Main from TestMain to remove it afterwards). Every wait has a
// deadline, every process is killed when the test ends, and each replica's
// log is kept in a file whose tail is printed when the test failed. Use
// tests/harness instead when a test needs replicas in its own process
// (hooks, direct state access, the race detector on server code).
package proccluster
