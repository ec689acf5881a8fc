// Package ctlproc runs kcore-controller replicas as child processes on
// loopback: an Authority issues every certificate a run needs and writes
// each replica's PKI dir as `kctl controller init` does, and Start runs one
// replica, letting it pick its own ports and reading the addresses it bound
// back from its log, so there is no window in which another process can
// take a port chosen in advance.
//
// kcore-bench (pkg/bench) measures such processes and tests/proccluster
// builds its test Cluster on them; both need the same PKI files and the
// same start, kill and restart, so the code lives here rather than under
// tests/, which nothing in pkg may import.
package ctlproc
