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

// etcdStatus is the part of etcd's /v3/maintenance/status a gate reads;
// the JSON gateway writes 64-bit numbers as strings.
type etcdStatus struct {
	Leader           string `json:"leader"`
	RaftIndex        string `json:"raftIndex"`
	RaftAppliedIndex string `json:"raftAppliedIndex"`
}

// EtcdCaughtUp implements Checker: node's member must answer, know a
// leader, and have applied within etcdLagLimit entries of the newest raft
// index any member reports.
func (h *HTTPChecker) EtcdCaughtUp(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, node string) string {
	var newest, applied uint64
	var own *etcdStatus
	for _, n := range c.Spec.ControlPlaneNodes {
		st, err := h.memberStatus(ctx, c, s, n)
		if err != nil {
			if n.NodeID == node {
				return fmt.Sprintf("etcd member %s: %v", node, err)
			}
			continue
		}
		idx, _ := strconv.ParseUint(st.RaftIndex, 10, 64)
		newest = max(newest, idx)
		if n.NodeID == node {
			own = st
			applied, _ = strconv.ParseUint(st.RaftAppliedIndex, 10, 64)
		}
	}
	switch {
	case own == nil:
		return fmt.Sprintf("etcd member %s is not a control plane of %s", node, c.Metadata.Name)
	case own.Leader == "" || own.Leader == "0":
		return fmt.Sprintf("etcd member %s knows no leader", node)
	case applied+etcdLagLimit < newest:
		return fmt.Sprintf("etcd member %s applied index %d, %d behind the newest %d", node, applied, newest-applied, newest)
	}
	return ""
}

// memberStatus asks one control plane's etcd member for its status.
func (h *HTTPChecker) memberStatus(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, n api.ClusterNode) (*etcdStatus, error) {
	client, err := h.memberClient(s, n.NodeID)
	if err != nil {
		return nil, err
	}
	defer client.CloseIdleConnections()
	url := etcdURL(h.EtcdEndpoint, c, n.AdvertiseAddress) + "/v3/maintenance/status"
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
