// Package harness runs several controller replicas in one test process:
// each replica has its own t.TempDir data dir and a raft listener on
// 127.0.0.1:0 (handed to raft as a stream layer, so no port races), with
// fast raft timeouts. It starts, stops, restarts (same data dir and
// address), adds and removes replicas, and offers poll helpers with
// deadlines instead of sleeps.
//
// Hooks let other test suites run more per replica, e.g. an HTTP API
// server on top of each Node.
package harness
