package cli

import (
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/manifest"
	"kcore.dev/kcore/pkg/plan"
)

// locateIssues returns resp for printing with the field path of every plan
// issue about a document read from an HCL manifest named as the HCL author
// wrote it and followed by where (`min_compatible_reader at u.hcl:6:3`): a
// cluster's issues by their cluster, a ClusterUpdate's rollout issues by
// the update. Issues about YAML documents keep their field path. resp itself
// is not changed: it is what a saved plan and its hash hold.
func locateIssues(docs []*manifest.Document, resp *apiv1.PlanResponse) *apiv1.PlanResponse {
	clusters, updates := map[string]*manifest.Document{}, map[string]*manifest.Document{}
	for _, d := range docs {
		if d.Format != manifest.FormatHCL {
			continue
		}
		switch d.Kind {
		case api.KindKubernetesCluster:
			clusters[d.Name] = d
		case api.KindClusterUpdate:
			updates[d.Name] = d
		}
	}
	if resp == nil || (len(clusters) == 0 && len(updates) == 0) {
		return resp
	}
	out := *resp
	if resp.Plan != nil {
		p := *resp.Plan
		byCluster := func(i plan.Issue) *manifest.Document { return clusters[i.Cluster] }
		p.Blocking = locateList(p.Blocking, byCluster)
		p.Warnings = locateList(p.Warnings, byCluster)
		out.Plan = &p
	}
	out.Updates = make([]apiv1.UpdatePlan, len(resp.Updates))
	for n, u := range resp.Updates {
		if d := updates[u.Name]; d != nil && u.Rollout != nil {
			r := *u.Rollout
			byUpdate := func(plan.Issue) *manifest.Document { return d }
			r.Blocking = locateList(r.Blocking, byUpdate)
			r.Warnings = locateList(r.Warnings, byUpdate)
			u.Rollout = &r
		}
		out.Updates[n] = u
	}
	return &out
}

// locateList copies list, rewriting the path of each issue docOf finds an
// HCL document for.
func locateList(list []plan.Issue, docOf func(plan.Issue) *manifest.Document) []plan.Issue {
	if list == nil {
		return nil
	}
	out := make([]plan.Issue, len(list))
	for n, i := range list {
		if d := docOf(i); d != nil && i.Path != "" {
			written := d.FieldPath(i.Path)
			if written == "" {
				written = "resource " + d.Name
			}
			i.Path = written + " at " + d.PosOf(i.Path).String()
		}
		out[n] = i
	}
	return out
}
