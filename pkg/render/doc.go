// Package render turns a KubernetesCluster, its secrets and the facts its
// nodes reported into one api.NodeState per member: the files, units,
// volumes and tasks that node must have. It is pure: no clock, no randomness,
// no I/O, and the output is sorted so the same input always renders the same
// bytes (golden-tested under testdata/).
//
// Each node's state holds only its own keys; cluster-wide signing keys
// (cluster CA, service-account key) go to control planes only. Every unit and
// task carries an input hash over its argv, environment and the content of
// every file it reads, so the agent restarts exactly what an edit affects. A
// unit that reads a file again on SIGHUP (keepalived, for its unicast peers)
// has that file in a reload hash instead, and the agent reloads it.
//
// Every item also carries a Reason (what it is: a certificate's subject and
// SANs, a kubeconfig's user and server) and units and tasks the Inputs their
// hash covers. Neither is serialised or hashed: they are for pkg/plan, which
// renders twice and shows the difference. This package owns the names every
// other package uses: paths, unit and task names, ports (paths.go) and the
// keepalived priority rule (Priority); it never imports pkg/plan.
package render
