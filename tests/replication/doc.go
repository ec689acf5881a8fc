// Package replication holds the controller's replication tests: writes
// survive leader loss, restarts and snapshots, membership changes keep the
// cluster working and refuse quorum loss, and newer schemas are refused.
// They run real raft replicas in-process through tests/harness.
package replication
