// Package e2e runs the lab (scripts/lab.sh, as `make lab` does) and checks
// the end-to-end scenarios against real processes: three
// kcore-controller replicas, a kcore-node-agent per network namespace, and the
// containerd, etcd, kube-apiserver, kubelet and keepalived they run.
//
// The tests run only when KCORE_E2E=1, as root, with the Kubernetes binaries
// built (make k8s-bins); otherwise they skip and say why. They create the
// bridge kcore-lab0, the namespaces kcore-lab-n1..n3 and /var/lib/kcore-lab,
// send traffic only to the lab's own addresses (10.77.0.0/24) and remove
// everything afterwards, also on failure. A lab that is already up (make
// lab) is left alone: the tests skip.
package e2e
