package orchestrator

import (
	"context"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// checkHealth runs the cluster's health checks and records in status the
// API endpoint /readyz answered through (status.apiEndpoint), which
// planSpecRollout compares with the spec to tell an endpoint move.
func (o *Orchestrator) checkHealth(ctx context.Context, c *api.KubernetesCluster, sec *pki.ClusterSecrets, status *api.ClusterStatus) Health {
	h := o.cfg.Checker.Check(ctx, c, sec)
	if h.API.OK {
		status.APIEndpoint = c.Spec.APIServerEndpoint
	}
	return h
}

// movesEndpoint reports whether c's spec names another API endpoint than
// the one the cluster last answered through. Such a change cannot roll one
// control plane at a time: the VIP is one VRRP group whose members must
// agree on the address, so a control plane moved alone keeps backing up a
// peer that still advertises the old VIP and the new one appears only once
// the last node moved, while the moved nodes' kube-proxy and kubelet
// already talk to it; a rollout would wait on the first step's gate
// forever.
func movesEndpoint(c *api.KubernetesCluster) bool {
	prev := c.Status.APIEndpoint
	return prev != "" && prev != c.Spec.APIServerEndpoint
}
