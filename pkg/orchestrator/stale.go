package orchestrator

import (
	"context"
	"fmt"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// CondEtcdMembers is True when etcd's member list and the manifest's
// control planes agree, False when a stale member is found (status
// etcdStaleMembers lists them), Unknown when etcd did not answer.
const CondEtcdMembers = "EtcdMembers"

// staleMembers compares etcd's members with c's control planes: a member
// whose peer URLs match no control plane is not in the manifest; a control
// plane with no member never joined. The caller checks only a cluster
// whose etcd is healthy and that is not changing its membership
// (scaling does that).
func staleMembers(c *api.KubernetesCluster, members []EtcdMember) []api.StaleEtcdMember {
	want := map[string]string{}
	for _, n := range c.Spec.ControlPlaneNodes {
		want[peerURL(c, n.AdvertiseAddress)] = n.NodeID
	}
	joined := map[string]bool{}
	var out []api.StaleEtcdMember
	for _, m := range members {
		node := ""
		for _, u := range m.PeerURLs {
			if id, ok := want[u]; ok {
				node = id
			}
		}
		if node == "" {
			out = append(out, api.StaleEtcdMember{Reason: api.StaleNotInManifest, Name: m.Name, ID: m.ID, PeerURLs: m.PeerURLs})
			continue
		}
		joined[node] = true
	}
	for _, n := range c.Spec.ControlPlaneNodes {
		if !joined[n.NodeID] {
			out = append(out, api.StaleEtcdMember{Reason: api.StaleNeverJoined, Name: n.NodeID, PeerURLs: []string{peerURL(c, n.AdvertiseAddress)}})
		}
	}
	return out
}

// checkMembers records in status what etcd's membership and the manifest
// disagree on, with the command that fixes each (a scale or replace
// plan removes every member not in the manifest before it adds one).
func (o *Orchestrator) checkMembers(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, status *api.ClusterStatus) api.Condition {
	members, err := o.cfg.Etcd.Members(ctx, c, s)
	if err != nil {
		return api.Condition{Type: CondEtcdMembers, Status: StatusUnknown, Reason: "CheckFailed", Message: err.Error()}
	}
	stale := staleMembers(c, members)
	status.EtcdStaleMembers = stale
	if len(stale) == 0 {
		return api.Condition{Type: CondEtcdMembers, Status: StatusTrue, Reason: "InSync", Message: fmt.Sprintf("%d etcd members, one per control plane", len(members))}
	}
	name := c.Metadata.Name
	var parts []string
	for _, m := range stale {
		switch m.Reason {
		case api.StaleNotInManifest:
			parts = append(parts, fmt.Sprintf("etcd member %s (%s) is no control plane of the manifest: it counts against the quorum; the next `kctl kubernetes scale %s` or `kctl kubernetes replace %s` plan removes it first",
				memberName(EtcdMember{Name: m.Name, PeerURLs: m.PeerURLs}), strings.Join(m.PeerURLs, ", "), name, name))
		case api.StaleNeverJoined:
			parts = append(parts, fmt.Sprintf("control plane %s has no etcd member: replace it (`kctl kubernetes replace %s --node %s --with ID:ADDR`) or remove it (`kctl kubernetes scale %s --remove %s`)", m.Name, name, m.Name, name, m.Name))
		}
	}
	return api.Condition{Type: CondEtcdMembers, Status: StatusFalse, Reason: "StaleMembers", Message: strings.Join(parts, "; ")}
}
