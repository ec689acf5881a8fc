package pki

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Kubeconfig renders a kubeconfig with one cluster, one user and one context,
// the credentials inline. server is an https URL or host:port.
func Kubeconfig(cluster, server string, caPEM []byte, user string, client KeyPair) string {
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]s
    certificate-authority-data: %[3]s
users:
- name: %[4]s
  user:
    client-certificate-data: %[5]s
    client-key-data: %[6]s
contexts:
- name: %[4]s@%[1]s
  context:
    cluster: %[1]s
    user: %[4]s
current-context: %[4]s@%[1]s
`, cluster, server, b64(caPEM), user, b64(client.CertPEM), b64(client.KeyPEM))
}
