package server

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// Limits on what one node may store as NodeReports.
const (
	// MaxReportBody is the request body limit of PUT /v1/nodes/{id}/report.
	// A report lists one short status per file, unit, volume and task of a
	// NodeState, far below this.
	MaxReportBody = 256 << 10
	// MaxReportsPerNode bounds the NodeReport objects one node may have,
	// one per cluster it is in.
	MaxReportsPerNode = 16
)

// putReport stores node {id}'s report on its NodeState of one cluster. It
// is refused (403) unless the node belongs to that cluster — the cluster's
// manifest names it, or the controller rendered a state for it there (a
// node being torn down after it left the manifest) — and unless the node
// stays within MaxReportsPerNode reports.
func (s *Server) putReport(c *call) (any, error) {
	id := c.r.PathValue("id")
	var rep api.NodeReport
	if err := decodeStrict(c.r.Body, &rep); err != nil {
		return nil, err
	}
	if rep.NodeID == "" {
		rep.NodeID = id
	}
	if rep.NodeID != id {
		return nil, badRequest("report nodeId %q does not match path node %q", rep.NodeID, id)
	}
	if rep.Cluster == "" {
		return nil, badRequest("report cluster is required")
	}
	name := apiv1.NodeStateName(rep.Cluster, id)
	c.object = apiv1.KindNodeReport + "/" + name
	st := s.backend.State()
	if !memberOf(st, rep.Cluster, id) {
		return nil, forbidden("node %q is not in cluster %q: a node reports only on clusters whose manifest names it", id, rep.Cluster)
	}
	data, err := json.Marshal(rep)
	if err != nil {
		return nil, fmt.Errorf("encode report %s: %w", name, err)
	}
	cur, exists := st.Get(apiv1.KindNodeReport, name)
	if exists && sameJSON(cur.Data, data) {
		c.skipAudit = true
		return apiv1.WriteResponse{Index: cur.ModifyIndex}, nil
	}
	if !exists {
		if n := reportsOf(st, id); n >= MaxReportsPerNode {
			return nil, forbidden("node %q already has %d reports, the limit per node", id, n)
		}
	}
	idx, err := s.apply(c.r.Context(), store.Put{Kind: apiv1.KindNodeReport, Name: name, Data: data})
	if err != nil {
		return nil, err
	}
	return apiv1.WriteResponse{Index: idx}, nil
}

// memberOf reports whether node belongs to cluster: the stored manifest
// names it, or a NodeState was rendered for it in that cluster.
func memberOf(st *store.State, cluster, node string) bool {
	if _, ok := st.Get(api.KindNodeState, apiv1.NodeStateName(cluster, node)); ok {
		return true
	}
	o, ok := st.Get(api.KindKubernetesCluster, cluster)
	if !ok {
		return false
	}
	var kc api.KubernetesCluster
	if err := json.Unmarshal(o.Data, &kc); err != nil {
		return false
	}
	return slices.ContainsFunc(kc.Spec.Members(), func(n api.ClusterNode) bool { return n.NodeID == node })
}

// reportsOf counts the NodeReports stored for node.
func reportsOf(st *store.State, node string) int {
	n := 0
	for _, o := range st.List(apiv1.KindNodeReport) {
		if i := strings.LastIndexByte(o.Name, '/'); i >= 0 && o.Name[i+1:] == node {
			n++
		}
	}
	return n
}
