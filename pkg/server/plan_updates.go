package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/rollout"
)

// planUpdates plans the ClusterUpdates of a request: create when none is
// stored under the name, update when the defaulted spec or labels differ,
// no-op otherwise, each created or changed one with the rollout it will run.
// Invalid and duplicate updates become blocking issues of p, warnings
// become its warnings.
func planUpdates(p *plan.Plan, v *view, desired []api.ClusterUpdate) ([]apiv1.UpdatePlan, error) {
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
		if cur, ok := v.updates[name]; ok {
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
			up.Rollout = rollout.Plan(rollout.Input{Update: up.Desired, Clusters: v.stored, Nodes: v.nodes})
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
