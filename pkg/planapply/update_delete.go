package planapply

import (
	"encoding/json"
	"fmt"
	"slices"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
)

// planUpdateDeletes plans the removal of the ClusterUpdates req.DeleteUpdates
// names. One that is not stored, that the request also declares, or whose
// rollout is under way (approved, rolling, paused, rolling back) is a
// blocking issue of p: removing it then would leave nodes half moved with
// nothing to resume or roll them back.
func planUpdateDeletes(p *plan.Plan, v *View, req apiv1.PlanRequest) ([]apiv1.UpdatePlan, error) {
	var out []apiv1.UpdatePlan
	seen := map[string]bool{}
	for _, name := range req.DeleteUpdates {
		if seen[name] || slices.ContainsFunc(req.Updates, func(u api.ClusterUpdate) bool { return u.Metadata.Name == name }) {
			p.Blocking = append(p.Blocking, plan.Issue{Code: plan.CodeConflictingRequest,
				Message: fmt.Sprintf("ClusterUpdate %q is both deleted and applied, or deleted twice", name),
				Fix:     "name each ClusterUpdate once: either delete it or apply it"})
			continue
		}
		seen[name] = true
		cur, ok := v.Updates[name]
		if !ok {
			p.Blocking = append(p.Blocking, plan.Issue{Code: plan.CodeUpdateNotFound,
				Message: fmt.Sprintf("no stored ClusterUpdate is named %q", name),
				Fix:     "check the name with `kctl update list`"})
			continue
		}
		var u api.ClusterUpdate
		if err := json.Unmarshal(cur.Data, &u); err != nil {
			return nil, fmt.Errorf("decode stored update %s: %w", name, err)
		}
		if !removable(u.Status.Phase) {
			p.Blocking = append(p.Blocking, plan.Issue{Code: plan.CodeUpdateInProgress, Path: "status.phase",
				Message: fmt.Sprintf("ClusterUpdate %q is %s: its rollout is under way", name, u.Status.Phase),
				Fix:     fmt.Sprintf("wait until it is done, or pause it and roll it back (`kctl update rollback %s`), then delete it", name)})
			continue
		}
		out = append(out, apiv1.UpdatePlan{Name: name, Action: apiv1.UpdateDelete})
	}
	return out, nil
}

// removable reports whether a ClusterUpdate in phase may be removed: it
// never started (pending) or it finished (done, failed).
func removable(phase string) bool {
	switch phase {
	case "", rollout.PhasePending, rollout.PhaseDone, rollout.PhaseFailed:
		return true
	}
	return false
}

// deleteUpdateOp is the CAS delete of a stored ClusterUpdate.
func deleteUpdateOp(cur store.Object) store.Op {
	return store.Op{Delete: &store.Delete{Kind: api.KindClusterUpdate, Name: cur.Name, ExpectModifyIndex: store.Expect(cur.ModifyIndex)}}
}
