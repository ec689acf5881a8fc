package planapply

import (
	"fmt"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/render"
)

// StaleError refuses a plan whose stored state changed since it was
// reviewed; Reason says what changed.
type StaleError struct {
	// Index is the index the plan was reviewed at.
	Index uint64
	// Reason says why, for the person who runs plan again.
	Reason string
}

func (e *StaleError) Error() string { return e.Reason }

// BlockedError refuses a plan with blocking issues.
type BlockedError struct {
	// Issues are the plan's blocking issues.
	Issues []plan.Issue
}

func (e *BlockedError) Error() string {
	codes := make([]string, 0, len(e.Issues))
	for _, i := range e.Issues {
		codes = append(codes, i.Code)
	}
	return fmt.Sprintf("the plan is blocked by %d issue(s): %s", len(e.Issues), strings.Join(codes, ", "))
}

// ReplaceError refuses to apply a plan that replaces a cluster: the
// orchestrator cannot yet tear a cluster down and bootstrap it again in one
// go, so plan shows what a replace would do and apply refuses it.
type ReplaceError struct {
	// Cluster is the first cluster the request replaces.
	Cluster string
}

func (e *ReplaceError) Error() string {
	return fmt.Sprintf("replace is planned but not applied yet: delete the cluster (kctl kubernetes delete %s --wait), then apply its manifest", e.Cluster)
}

// Check recomputes the plan the caller reviewed (req.Request at req.Index)
// against v, rendering with opts, and returns it when it may be applied. It
// refuses a replace (ReplaceError), a plan stale against v (StaleError: an
// index ahead of v's, a hash that differs from the reviewed one, or an
// object the plan writes modified after req.Index) and a blocked plan
// (BlockedError), in that order.
func Check(v *View, req apiv1.ApplyRequest, opts render.Options) (*apiv1.PlanResponse, error) {
	if len(req.Request.Recreate) > 0 {
		return nil, &ReplaceError{Cluster: req.Request.Recreate[0]}
	}
	if req.Index > v.Index {
		return nil, &StaleError{Index: req.Index, Reason: fmt.Sprintf("the plan's index %d is ahead of the controller's %d", req.Index, v.Index)}
	}
	resp, err := compute(v, req.Request, req.Index, opts)
	if err != nil {
		return nil, err
	}
	if resp.Hash != req.Hash || touchedSince(v, resp, req.Index) {
		return nil, &StaleError{Index: req.Index, Reason: staleReason(v, resp, req.Index)}
	}
	if resp.Blocked() {
		return nil, &BlockedError{Issues: resp.Plan.Blocking}
	}
	return resp, nil
}

// touchedSince reports whether a ClusterUpdate the plan writes changed
// after index. A cluster written since is stale through the hash instead:
// the plan holds its spec's field changes, generation and phase, so the
// controller's own status writes (a health check every interval, a
// condition) leave a reviewed plan valid, and the commit writes the spec
// over the status as it is then.
func touchedSince(v *View, resp *apiv1.PlanResponse, index uint64) bool {
	for _, u := range resp.Updates {
		if o, ok := v.Updates[u.Name]; ok && o.ModifyIndex > index {
			return true
		}
	}
	return false
}

// staleReason says why a plan recomputed at apply differs from the one
// reviewed at index: an object it writes changed, or the plan's hash,
// which covers every rendered file, unit, task and volume it changes,
// differs because what would be rendered now is not what was reviewed
// (a member reported new facts, or the controller renders differently).
func staleReason(v *View, resp *apiv1.PlanResponse, index uint64) string {
	var changed, nodes []string
	updated := false
	for _, cp := range resp.Plan.Clusters {
		if o, ok := v.Clusters[cp.Name]; ok && o.ModifyIndex > index {
			changed = append(changed, api.KindKubernetesCluster+"/"+cp.Name)
		}
		for _, st := range cp.Steps {
			if v.NodeIndex[st.Node] > index && !slices.Contains(nodes, st.Node) {
				nodes = append(nodes, st.Node)
			}
		}
	}
	for _, u := range resp.Updates {
		if o, ok := v.Updates[u.Name]; ok && o.ModifyIndex > index {
			changed = append(changed, api.KindClusterUpdate+"/"+u.Name)
			updated = true
		}
	}
	switch {
	// A cluster written since may have had only its status observed,
	// which alone stales nothing: new facts of a member explain more.
	case len(nodes) > 0 && !updated:
		return fmt.Sprintf("what would be rendered now differs from the reviewed plan: %s reported new facts since index %d", strings.Join(nodes, ", "), index)
	case len(changed) > 0:
		return fmt.Sprintf("%s changed since this plan was made (index %d)", strings.Join(changed, ", "), index)
	}
	return fmt.Sprintf("what would be applied now differs from the reviewed plan (index %d): its steps, the files, units, tasks and volumes they render, its issues or its options changed", index)
}
