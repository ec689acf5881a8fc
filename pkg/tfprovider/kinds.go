package tfprovider

import (
	"fmt"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/manifest"
	"kcore.dev/kcore/pkg/plan"
)

// object is a pkg/api object a resource manages.
type object interface {
	// Default fills what the controller fills before it stores the object.
	Default()
}

// planned is what a controller plan does to one resource's object.
type planned struct {
	action string
	// desired is what the controller will store; nil for no-op and delete.
	desired object
	// diff are the changed field paths.
	diff []string
	// lines describe the change: the action, the changed fields and the
	// steps per node.
	lines []string
}

// kind is what differs between the two resource types.
type kind struct {
	resource   string
	apiKind    string
	schemaFile string
	what       string
	newObject  func() object
	name       func(object) string
	// request is the plan request that stores obj.
	request func(object) apiv1.PlanRequest
	// planned finds name's part of a plan response.
	planned func(*apiv1.PlanResponse, string) planned
	// phase reads the phase of a stored object.
	phase func(object) string
	// deleteRequest is the plan request that removes the stored object
	// name: a cluster's teardown, or a ClusterUpdate's removal. The
	// controller changes neither kind outside plan and apply.
	deleteRequest func(name string, o options) apiv1.PlanRequest
	// volumes reports whether the kind's teardown keeps or removes volumes.
	volumes bool
}

// clusterKind is kcore_kubernetes_cluster.
func clusterKind() kind {
	return kind{
		resource:   manifest.ResourceKubernetesCluster,
		apiKind:    api.KindKubernetesCluster,
		schemaFile: "kubernetescluster.json",
		what:       "A kcore Kubernetes cluster (KubernetesCluster), planned and applied through the controller like kctl kubernetes apply.",
		newObject:  func() object { return &api.KubernetesCluster{Kind: api.KindKubernetesCluster} },
		name:       func(o object) string { return o.(*api.KubernetesCluster).Metadata.Name },
		request: func(o object) apiv1.PlanRequest {
			return apiv1.PlanRequest{Clusters: []api.KubernetesCluster{*o.(*api.KubernetesCluster)}}
		},
		planned: func(r *apiv1.PlanResponse, name string) planned {
			for _, cp := range r.Plan.Clusters {
				if cp.Name == name {
					return clusterPlanned(cp)
				}
			}
			return planned{action: plan.ActionNoOp}
		},
		phase: func(o object) string { return o.(*api.KubernetesCluster).Status.Phase },
		deleteRequest: func(name string, o options) apiv1.PlanRequest {
			return apiv1.PlanRequest{Delete: []string{name}, Force: o.force, PurgeVolumes: o.purge}
		},
		volumes: true,
	}
}

func clusterPlanned(cp plan.ClusterPlan) planned {
	p := planned{action: cp.Action, lines: []string{fmt.Sprintf("%s cluster %s", cp.Action, cp.Name)}}
	if cp.Desired != nil {
		d := *cp.Desired
		p.desired = &d
	}
	for _, fc := range cp.Diff {
		p.diff = append(p.diff, fc.Path)
		p.lines = append(p.lines, fmt.Sprintf("%s: %q -> %q", fc.Path, fc.Old, fc.New))
	}
	for _, s := range cp.Steps {
		line := fmt.Sprintf("node %s: %s %s (disruption: %s)", s.Node, s.Component, s.Action, s.Disruption)
		if s.Detail != "" {
			line += ": " + s.Detail
		}
		p.lines = append(p.lines, line)
	}
	return p
}

// updateKind is kcore_cluster_update.
func updateKind() kind {
	return kind{
		resource:   manifest.ResourceClusterUpdate,
		apiKind:    api.KindClusterUpdate,
		schemaFile: "clusterupdate.json",
		what:       "A kcore ClusterUpdate: a NixOS/Kubernetes version rollout over the nodes, planned and stored through the controller like kctl apply -f.",
		newObject:  func() object { return &api.ClusterUpdate{Kind: api.KindClusterUpdate} },
		name:       func(o object) string { return o.(*api.ClusterUpdate).Metadata.Name },
		request: func(o object) apiv1.PlanRequest {
			return apiv1.PlanRequest{Updates: []api.ClusterUpdate{*o.(*api.ClusterUpdate)}}
		},
		planned: func(r *apiv1.PlanResponse, name string) planned {
			for _, u := range r.Updates {
				if u.Name != name {
					continue
				}
				p := planned{action: u.Action, lines: []string{fmt.Sprintf("%s update %s", u.Action, u.Name)}}
				if u.Desired != nil {
					d := *u.Desired
					p.desired = &d
				}
				for _, fc := range u.Diff {
					p.diff = append(p.diff, fc.Path)
					p.lines = append(p.lines, fmt.Sprintf("%s: %q -> %q", fc.Path, fc.Old, fc.New))
				}
				return p
			}
			return planned{action: apiv1.UpdateNoOp}
		},
		phase: func(o object) string { return o.(*api.ClusterUpdate).Status.Phase },
		deleteRequest: func(name string, _ options) apiv1.PlanRequest {
			return apiv1.PlanRequest{DeleteUpdates: []string{name}}
		},
	}
}
