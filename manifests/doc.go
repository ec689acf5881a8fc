// Package manifests holds the Kubernetes manifests kcore applies to its
// clusters, embedded in the binaries: the local-path provisioner, the Cilium
// L2 pool and announcement policy, CoreDNS and the bootstrap RBAC. Each is a
// text/template (or plain YAML) rendered by a function here, deterministic for
// the same input. Deployments and Workloads read back the Deployments and
// DaemonSets a manifest creates, so health checks find them by the names the
// manifests give.
package manifests
