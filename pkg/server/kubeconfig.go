package server

import (
	"errors"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/pki"
)

// kubeconfig answers POST /v1/clusters/{name}/kubeconfig: a kubeconfig for
// the cluster's API endpoint with a client certificate, signed by the
// cluster CA, for the caller's own identity (Kubernetes user
// "kcore:<subject>", group pki.ClusterAdminsGroup) and a bounded lifetime.
// Only cluster-admin may call it; the call is audited, the key is never
// stored.
func (s *Server) kubeconfig(c *call) (any, error) {
	var req apiv1.KubeconfigRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	ttl, err := kubeconfigTTL(req.TTL)
	if err != nil {
		return nil, err
	}
	kc, _, err := s.storedCluster(c)
	if err != nil {
		return nil, err
	}
	c.object = "Kubeconfig/" + kc.Metadata.Name + "/" + c.subject()
	sec, err := etcdsnap.OpenClusterSecrets(s.keyring, s.backend.State(), kc.Metadata.Name)
	if errors.Is(err, etcdsnap.ErrNotFound) {
		return nil, newError(apiv1.CodeConflict, "cluster %q has no PKI yet: it has not bootstrapped", kc.Metadata.Name)
	}
	if err != nil {
		return nil, err
	}
	groups := []string{pki.ClusterAdminsGroup}
	cfg, user, notAfter, err := sec.UserKubeconfig(kc, c.subject(), groups, ttl, s.now())
	if err != nil {
		return nil, err
	}
	return apiv1.KubeconfigResponse{Kubeconfig: cfg, User: user, Groups: groups, Expires: notAfter.UTC().Format(time.RFC3339)}, nil
}

// kubeconfigTTL parses a requested lifetime within the bounds.
func kubeconfigTTL(s string) (time.Duration, error) {
	if s == "" {
		return apiv1.DefaultKubeconfigTTL, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < apiv1.MinKubeconfigTTL || d > apiv1.MaxKubeconfigTTL {
		return 0, badRequest("ttl %q: want a duration from %s to %s, such as 8h", s, apiv1.MinKubeconfigTTL, apiv1.MaxKubeconfigTTL)
	}
	return d, nil
}
