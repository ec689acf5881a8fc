package pki

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Kubeconfig renders a kubeconfig with one cluster, one user and one context,
// the credentials inline. server is an https URL or host:port.
func Kubeconfig(cluster, server string, caPEM []byte, user string, client KeyPair) string {
	b64 := base64.StdEncoding.EncodeToString
	return kubeconfig(cluster, server, user, "-data", b64(caPEM), b64(client.CertPEM), b64(client.KeyPEM))
}

// KubeconfigFiles renders a kubeconfig like Kubeconfig whose credentials are
// file references (certificate-authority, client-certificate, client-key)
// instead of inline data. client-go reloads a client pair given as files
// when it changes on disk (and, with ClientsAllowCARotation, the CA file),
// so a renewal that rewrites the files reaches a running component without
// a restart, and the kubeconfig itself does not change. The paths must be
// absolute: client-go resolves relative ones against the kubeconfig's
// directory.
func KubeconfigFiles(cluster, server, caFile, user, certFile, keyFile string) string {
	return kubeconfig(cluster, server, user, "", caFile, certFile, keyFile)
}

// kubeconfig is the one kubeconfig writer: the credentials' keys end in
// suffix ("-data" for inline base64, "" for file paths).
func kubeconfig(cluster, server, user, suffix, ca, cert, key string) string {
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]s
    certificate-authority%[7]s: %[3]s
users:
- name: %[4]s
  user:
    client-certificate%[7]s: %[5]s
    client-key%[7]s: %[6]s
contexts:
- name: %[4]s@%[1]s
  context:
    cluster: %[1]s
    user: %[4]s
current-context: %[4]s@%[1]s
`, cluster, server, ca, user, cert, key, suffix)
}
