// Package pki issues the certificates kcore uses: the controller's CA and its
// server and client certificates, and every Kubernetes cluster's CAs,
// certificates, service-account keys and kubeconfigs.
//
// Keys are ECDSA P-256 (service-account keys RSA 2048, which every Kubernetes
// release accepts). Everything is PEM-encoded so it can be stored (encrypted)
// by the controller and written to files by the node agent.
package pki
