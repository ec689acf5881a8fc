// Package proccluster runs a real controller cluster for tests: Cluster
// starts N kcore-controller processes on loopback (ports they pick
// themselves, one t.TempDir data dir and PKI dir each, certificates from
// pkg/pki through pkg/ctlproc) and offers the faults only a process has:
// Kill (SIGKILL), Restart (same data dir and addresses), Pause and Resume
// (SIGSTOP, SIGCONT). Leader, WaitCaughtUp and Client speak the HTTP API,
// as kctl and the agents do.
//
// The binary is KCORE_CONTROLLER_BIN when set, else built once per test
// binary (call Main from TestMain to remove it afterwards). Every wait has a
// deadline, every process is killed when the test ends, and each replica's
// log is kept in a file whose tail is printed when the test failed. Use
// tests/harness instead when a test needs replicas in its own process
// (hooks, direct state access, the race detector on server code).
package proccluster
