// Package render turns a KubernetesCluster, its secrets and the facts its
// nodes reported into one api.NodeState per member: the files, units,
// volumes and tasks that node must have. It is pure: no clock, no randomness,
// no I/O, and the output is sorted so the same input always renders the same
// bytes (golden-tested under testdata/).
//
// Each node's state holds only its own keys; cluster-wide signing keys
// (cluster CA, service-account key) go to control planes only. Every unit and
// task carries an input hash over its argv, environment and the content of
// every file it reads, so the agent restarts exactly what an edit affects.
package render
