package planapply

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
)

// View is the stored state a plan is computed against, read at one index.
type View struct {
	// Index is the store index the objects were read at.
	Index uint64
	// Clusters are the stored KubernetesCluster objects by name; their
	// modify indexes are what a commit expects and a stale check compares.
	Clusters map[string]store.Object
	// Updates are the stored ClusterUpdate objects by name.
	Updates map[string]store.Object
	// Stored are the decoded stored clusters, the plan's stored side.
	Stored []*api.KubernetesCluster
	// Nodes are the decoded registered nodes, with the readiness the caller
	// knows of (the server merges its heartbeats in).
	Nodes []*api.Node
	// NodeIndex is each Node object's modify index: a node that reported
	// new facts after a plan may render differently.
	NodeIndex map[string]uint64
	// Controllers are the controller replicas with the schema each
	// recorded (apiv1.ControllerReplicas); ClusterUpdate schema gates are
	// checked against them.
	Controllers []rollout.ControllerReplica
}

// NewView decodes the stored clusters, ClusterUpdates and nodes read at
// index into a View. A node without a name in its body takes its object's.
func NewView(index uint64, clusters, updates, nodes []store.Object) (*View, error) {
	v := &View{Index: index, Clusters: map[string]store.Object{}, Updates: map[string]store.Object{}, NodeIndex: map[string]uint64{}}
	for _, o := range clusters {
		var c api.KubernetesCluster
		if err := json.Unmarshal(o.Data, &c); err != nil {
			return nil, fmt.Errorf("decode stored cluster %s: %w", o.Name, err)
		}
		v.Clusters[o.Name] = o
		v.Stored = append(v.Stored, &c)
	}
	for _, o := range updates {
		v.Updates[o.Name] = o
	}
	for _, o := range nodes {
		var n api.Node
		if err := json.Unmarshal(o.Data, &n); err != nil {
			return nil, fmt.Errorf("decode stored node %s: %w", o.Name, err)
		}
		if n.Metadata.Name == "" {
			n.Metadata.Name = o.Name
		}
		v.NodeIndex[n.Metadata.Name] = o.ModifyIndex
		v.Nodes = append(v.Nodes, &n)
	}
	return v, nil
}

// Plan plans req against v at v's index, rendering with opts: the clusters'
// plan (plan.Compute), the ClusterUpdates' plans and the hash apply must
// send back.
func Plan(v *View, req apiv1.PlanRequest, opts render.Options) (*apiv1.PlanResponse, error) {
	return compute(v, req, v.Index, opts)
}

// compute plans req against v as if at index, rendering with opts.
func compute(v *View, req apiv1.PlanRequest, index uint64, opts render.Options) (*apiv1.PlanResponse, error) {
	desired := make([]*api.KubernetesCluster, len(req.Clusters))
	for i := range req.Clusters {
		desired[i] = &req.Clusters[i]
	}
	p := plan.Compute(plan.Input{
		Desired: desired, Stored: v.Stored, Nodes: v.Nodes, Index: index,
		Prune: req.Prune, Scale: req.Scale, Delete: req.Delete, Force: req.Force, Recreate: req.Recreate,
		Render: opts,
	})
	updates, err := planUpdates(p, v, req.Updates)
	if err != nil {
		return nil, err
	}
	dels, err := planUpdateDeletes(p, v, req)
	if err != nil {
		return nil, err
	}
	if len(dels) > 0 {
		updates = append(updates, dels...)
		slices.SortFunc(updates, func(a, b apiv1.UpdatePlan) int { return strings.Compare(a.Name, b.Name) })
	}
	return &apiv1.PlanResponse{Plan: p, Updates: updates, Hash: apiv1.CombinedHash(p, updates, req)}, nil
}

// planUpdates plans the ClusterUpdates of a request: create when none is
// stored under the name, update when the defaulted spec or labels differ,
// no-op otherwise, each created or changed one with the rollout it will run.
// Invalid and duplicate updates become blocking issues of p, warnings
// become its warnings.
func planUpdates(p *plan.Plan, v *View, desired []api.ClusterUpdate) ([]apiv1.UpdatePlan, error) {
	seen := map[string]bool{}
	var out []apiv1.UpdatePlan
	for _, d := range desired {
		u := api.ClusterUpdate{
			APIVersion: api.APIVersion, Kind: api.KindClusterUpdate,
			Metadata: api.ObjectMeta{Name: d.Metadata.Name, Labels: d.Metadata.Labels},
			Spec:     d.Spec,
		}
		u.Spec.Nodes = slices.Clone(d.Spec.Nodes)
		u.Default()
		name := u.Metadata.Name
		if seen[name] {
			p.Blocking = append(p.Blocking, plan.Issue{
				Code:    plan.CodeConflictingRequest,
				Message: fmt.Sprintf("ClusterUpdate %q is declared by more than one manifest", name),
				Fix:     "keep one manifest per ClusterUpdate name",
			})
			continue
		}
		seen[name] = true
		for _, i := range u.Validate() {
			issue := plan.Issue{Code: plan.CodeInvalidManifest, Path: i.Path, Message: fmt.Sprintf("ClusterUpdate %q: %s", name, i.Message)}
			if i.Severity == api.SeverityError {
				issue.Fix = "fix the manifest; `kctl kubernetes validate -f FILE` shows the line"
				p.Blocking = append(p.Blocking, issue)
			} else {
				issue.Code = plan.CodeManifestWarning
				p.Warnings = append(p.Warnings, issue)
			}
		}
		up := apiv1.UpdatePlan{Name: name, Action: apiv1.UpdateCreate, Desired: &u}
		if cur, ok := v.Updates[name]; ok {
			var old api.ClusterUpdate
			if err := json.Unmarshal(cur.Data, &old); err != nil {
				return nil, fmt.Errorf("decode stored update %s: %w", name, err)
			}
			up.Diff = updateDiff(old, u)
			up.Action = apiv1.UpdateUpdate
			if len(up.Diff) == 0 {
				up.Action, up.Desired = apiv1.UpdateNoOp, nil
			}
		}
		if up.Desired != nil {
			up.Rollout = rollout.Plan(rollout.Input{Update: up.Desired, Clusters: v.Stored, Nodes: v.Nodes, Controllers: v.Controllers})
		}
		out = append(out, up)
	}
	slices.SortFunc(out, func(a, b apiv1.UpdatePlan) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// updateDiff lists the changed labels and spec fields of a ClusterUpdate.
func updateDiff(old, cur api.ClusterUpdate) []plan.FieldChange {
	a, b := map[string]string{}, map[string]string{}
	flatten("metadata.labels", old.Metadata.Labels, a)
	flatten("metadata.labels", cur.Metadata.Labels, b)
	flatten("spec", old.Spec, a)
	flatten("spec", cur.Spec, b)
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []plan.FieldChange
	for _, k := range keys {
		if a[k] != b[k] {
			out = append(out, plan.FieldChange{Path: k, Old: a[k], New: b[k]})
		}
	}
	return out
}

// flatten writes every leaf of v's JSON form into out as path → value.
func flatten(prefix string, v any, out map[string]string) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	var tree any
	if json.Unmarshal(b, &tree) != nil {
		return
	}
	walk(prefix, tree, out)
}

// walk writes the leaves under v, a decoded JSON value at path, into out.
func walk(path string, v any, out map[string]string) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			walk(path+"."+k, e, out)
		}
	case []any:
		for i, e := range t {
			walk(fmt.Sprintf("%s[%d]", path, i), e, out)
		}
	case nil:
	case string:
		out[path] = t
	default:
		b, _ := json.Marshal(t)
		out[path] = string(b)
	}
}
