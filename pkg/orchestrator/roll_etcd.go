package orchestrator

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// etcdLagLimit is how many raft entries a control plane's etcd member may
// trail the newest index of its cluster and still count as caught up
// (etcd's own learner check allows a tenth of the leader's log; a few
// hundred entries are well under a second of API writes).
const etcdLagLimit = 500

// etcdStatus is the part of etcd's /v3/maintenance/status the roller reads;
// the JSON gateway writes 64-bit numbers as strings.
type etcdStatus struct {
	Leader           string `json:"leader"`
	RaftIndex        string `json:"raftIndex"`
	RaftAppliedIndex string `json:"raftAppliedIndex"`
}

// etcdCaughtUp says why node id's etcd member of c is not caught up yet
// ("" once it is): it must answer, know a leader, and have applied within
// etcdLagLimit entries of the newest raft index any member reports.
func (o *Orchestrator) etcdCaughtUp(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, id string) string {
	var newest, applied uint64
	var own *etcdStatus
	for _, n := range c.Spec.ControlPlaneNodes {
		st, err := o.memberStatus(ctx, s, n)
		if err != nil {
			if n.NodeID == id {
				return fmt.Sprintf("etcd member %s: %v", id, err)
			}
			continue
		}
		idx, _ := strconv.ParseUint(st.RaftIndex, 10, 64)
		newest = max(newest, idx)
		if n.NodeID == id {
			own = st
			applied, _ = strconv.ParseUint(st.RaftAppliedIndex, 10, 64)
		}
	}
	switch {
	case own == nil:
		return fmt.Sprintf("etcd member %s is not a control plane of %s", id, c.Metadata.Name)
	case own.Leader == "" || own.Leader == "0":
		return fmt.Sprintf("etcd member %s knows no leader", id)
	case applied+etcdLagLimit < newest:
		return fmt.Sprintf("etcd member %s applied index %d, %d behind the newest %d", id, applied, newest-applied, newest)
	}
	return ""
}

// memberStatus asks one control plane's etcd member for its status with the
// API server's etcd client certificate, at the address the health checks use.
func (o *Orchestrator) memberStatus(ctx context.Context, s *pki.ClusterSecrets, n api.ClusterNode) (*etcdStatus, error) {
	cp := s.ControlPlanes[n.NodeID]
	if cp == nil || len(cp.APIServerEtcdClient.CertPEM) == 0 {
		return nil, fmt.Errorf("no etcd client certificate for %s", n.NodeID)
	}
	client, err := tlsClient(s.EtcdCA.CertPEM, cp.APIServerEtcdClient, DefaultCheckTimeout)
	if err != nil {
		return nil, err
	}
	defer client.CloseIdleConnections()
	var endpoint func(string) string
	if h, ok := o.cfg.Checker.(*HTTPChecker); ok {
		endpoint = h.EtcdEndpoint
	}
	url := etcdURL(endpoint, n.AdvertiseAddress) + "/v3/maintenance/status"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("{}"))
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	var st etcdStatus
	if err := do(client, req, &st); err != nil {
		return nil, err
	}
	return &st, nil
}
