// Package etcdsnap takes etcd snapshots of a Kubernetes cluster and keeps
// them in the controller's store. It streams a snapshot from the first
// control plane whose etcd answers POST /v3/maintenance/snapshot on etcd's
// v3 JSON gateway (HTTPS with the cluster's etcd CA and the kube-apiserver
// etcd client certificate), verifies it by opening it with bbolt read-only
// and reading the revision it holds, gzips it and builds the store operations
// that keep it as an EtcdSnapshot object: metadata in clear, content sealed
// under the controller keyring (a snapshot holds the cluster's Kubernetes
// Secrets), the newest few per cluster kept.
package etcdsnap
