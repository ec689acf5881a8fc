package pki

import (
	"fmt"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// ClusterAdminsGroup is the Kubernetes group of the user certificates kcore
// issues to its cluster-admins; the bootstrap RBAC binds it to the
// cluster-admin ClusterRole, so access goes through RBAC (and can be taken
// away there), not through system:masters.
const ClusterAdminsGroup = "kcore:cluster-admins"

// UserPrefix prefixes the Kubernetes user name of a kcore identity, so a
// kcore subject can never pose as a Kubernetes system user.
const UserPrefix = "kcore:"

// UserKubeconfig issues a client certificate for the kcore subject, signed by
// the cluster CA, in the given groups, valid from now for ttl, and returns a
// kubeconfig for the cluster's API endpoint (the VIP with high availability)
// with it, the Kubernetes user name and the certificate's expiry.
func (s *ClusterSecrets) UserKubeconfig(c *api.KubernetesCluster, subject string, groups []string, ttl time.Duration, now time.Time) (string, string, time.Time, error) {
	ca, err := LoadCA(s.CA)
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("load cluster ca: %w", err)
	}
	user := UserPrefix + subject
	kp, err := ca.Issue(CertRequest{CommonName: user, Organization: groups, Usage: UsageClient, Validity: ttl}, now)
	if err != nil {
		return "", "", time.Time{}, err
	}
	cert, err := ParseCert(kp.CertPEM)
	if err != nil {
		return "", "", time.Time{}, err
	}
	return Kubeconfig(c.Metadata.Name, c.Spec.APIServerEndpoint, s.ClusterTrust(), user, kp), user, cert.NotAfter, nil
}
