// Package bench measures kcore against real references on this machine and
// reports one table and a JSON file (make bench).
//
// It owns the performance figures: the physical floor (fsync, loopback RTT),
// controller writes against three real etcd members, change propagation to
// 100 agents, 1,000 simulated agents heartbeating three controller
// processes, plan and render of a 100-node cluster, leader failover, and in
// the lab of scripts/lab.sh (root, cached binaries) the VIP moves and the
// time to ready against hand-started etcd and kube-apiserver; without the
// lab those rows say why they were not measured. Benchmarks are never
// assertions: nothing here runs in make test except the unit tests of its
// parsing and statistics helpers.
package bench
