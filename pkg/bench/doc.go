// Package bench measures kcore against real references on this machine and
// reports one table and a JSON file (make bench).
//
// It owns the figures of issue 7: the physical floor (fsync, loopback RTT),
// controller writes against three real etcd members, change propagation to
// 100 agents, 1,000 simulated agents heartbeating three controller
// processes, plan and render of a 100-node cluster, and leader failover.
// Figures that need the lab (VIP moves, time to ready) are listed as not
// measured. Benchmarks are never assertions: nothing here runs in make test
// except the unit tests of the statistics helpers.
package bench
