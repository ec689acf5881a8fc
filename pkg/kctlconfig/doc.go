// Package kctlconfig reads and writes kctl's configuration file
// (~/.kcore/config by default): kubeconfig-like contexts, each naming the
// controller addresses of one kcore installation and the credentials (CA,
// client certificate and key, inline as base64 PEM) to reach them, plus the
// current context. The file holds private keys, so it is always written
// atomically with mode 0600.
package kctlconfig
