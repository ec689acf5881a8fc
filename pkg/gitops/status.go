package gitops

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/rollout"
)

// fail records err as the last error and cond as False with reason.
func fail(st *api.GitSourceStatus, cond, reason string, err error, now time.Time) {
	st.LastError = bound(err.Error())
	setCondition(st, cond, "False", reason, st.LastError, now)
}

// bound cuts a message to api.MaxGitMessageLen bytes.
func bound(s string) string {
	if len(s) > api.MaxGitMessageLen {
		return s[:api.MaxGitMessageLen-3] + "..."
	}
	return s
}

// setCondition sets one condition, keeping its Since while its status holds.
func setCondition(st *api.GitSourceStatus, typ, status, reason, msg string, now time.Time) {
	c := api.Condition{Type: typ, Status: status, Reason: reason, Message: bound(msg), Since: stamp(now)}
	for i, old := range st.Conditions {
		if old.Type == typ {
			if old.Status == status {
				c.Since = old.Since
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

// condStatus is the status of a condition, "" when absent.
func condStatus(st api.GitSourceStatus, typ string) string {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// meta is the part of a stored object the runner reads.
type meta struct {
	Metadata api.ObjectMeta `json:"metadata"`
	Status   struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

func decodeMeta(data []byte) meta {
	var m meta
	_ = json.Unmarshal(data, &m)
	return m
}

// request is the plan request of a commit for source g: its clusters and
// updates, and the deletion of every cluster and ClusterUpdate g owns that
// the commit no longer declares (none when the commit declares nothing and
// g does not allow empty). An owned cluster already being deleted, and an
// owned update whose rollout is under way, are left out: planning them
// would only block the rest (the update is pruned by a later commit once
// it finished).
func (r *Runner) request(g api.GitSource, d desired) (apiv1.PlanRequest, error) {
	name := g.Metadata.Name
	req := apiv1.PlanRequest{Clusters: d.clusters, Updates: d.updates}
	declared := map[string]bool{}
	declaredUpdates := map[string]bool{}
	for _, c := range d.clusters {
		declared[c.Metadata.Name] = true
		if err := r.ownedBy(name, api.KindKubernetesCluster, c.Metadata.Name); err != nil {
			return req, err
		}
	}
	for _, u := range d.updates {
		declaredUpdates[u.Metadata.Name] = true
		if err := r.ownedBy(name, api.KindClusterUpdate, u.Metadata.Name); err != nil {
			return req, err
		}
	}
	if len(d.clusters)+len(d.updates) > api.MaxGitOwned {
		return req, fmt.Errorf("the commit declares %d objects, at most %d", len(d.clusters)+len(d.updates), api.MaxGitOwned)
	}
	if d.empty() && !g.Spec.AllowEmpty {
		return req, nil
	}
	for _, o := range r.cfg.State.List(api.KindKubernetesCluster) {
		m := decodeMeta(o.Data)
		if m.Metadata.Annotations[api.AnnotationGitSource] != name || declared[o.Name] {
			continue
		}
		if m.Status.Phase != api.PhaseDeleting {
			req.Delete = append(req.Delete, o.Name)
		}
	}
	slices.Sort(req.Delete)
	for _, o := range r.cfg.State.List(api.KindClusterUpdate) {
		m := decodeMeta(o.Data)
		if m.Metadata.Annotations[api.AnnotationGitSource] != name || declaredUpdates[o.Name] {
			continue
		}
		// An update under way stays until it finishes: removing it
		// would strand its rollout, and refusing would block the rest.
		if prunableUpdate(m.Status.Phase) {
			req.DeleteUpdates = append(req.DeleteUpdates, o.Name)
		}
	}
	slices.Sort(req.DeleteUpdates)
	return req, nil
}

// prunableUpdate reports whether an owned ClusterUpdate in phase may be
// pruned: it never started or it finished (planapply refuses the others).
func prunableUpdate(phase string) bool {
	switch phase {
	case "", rollout.PhasePending, rollout.PhaseDone, rollout.PhaseFailed:
		return true
	}
	return false
}

// ownedBy refuses an object that another source owns.
func (r *Runner) ownedBy(source, kind, name string) error {
	o, ok := r.cfg.State.Get(kind, name)
	if !ok {
		return nil
	}
	if owner := decodeMeta(o.Data).Metadata.Annotations[api.AnnotationGitSource]; owner != "" && owner != source {
		return fmt.Errorf("%s/%s is %w %q", kind, name, ErrOwnedElsewhere, owner)
	}
	return nil
}

// owned lists the objects source owns with the hash of their stored spec;
// a cluster being deleted is no longer listed.
func (r *Runner) owned(source string) []api.GitOwned {
	var out []api.GitOwned
	for _, kind := range []string{api.KindKubernetesCluster, api.KindClusterUpdate} {
		for _, o := range r.cfg.State.List(kind) {
			m := decodeMeta(o.Data)
			if m.Metadata.Annotations[api.AnnotationGitSource] != source || (kind == api.KindKubernetesCluster && m.Status.Phase == api.PhaseDeleting) {
				continue
			}
			if len(out) == api.MaxGitOwned {
				return out
			}
			out = append(out, api.GitOwned{Kind: kind, Name: o.Name, SpecHash: api.StoredSpecHash(o.Data)})
		}
	}
	return out
}

// contentHash hashes what a plan does, without the index it was computed
// at, so the same commit over the same state plans to the same hash.
func contentHash(resp *apiv1.PlanResponse) string {
	return api.SpecHash(struct {
		Clusters []plan.ClusterPlan
		Updates  any
		Blocking []plan.Issue
	}{resp.Plan.Clusters, resp.Updates, resp.Plan.Blocking})
}

// disruption is a plan's most disruptive step, or delete when it deletes
// or replaces a cluster; an unknown disruption counts as delete.
func disruption(resp *apiv1.PlanResponse) string {
	levels := api.GitDisruptions()
	worst := 0
	for _, c := range resp.Plan.Clusters {
		if c.Action == plan.ActionDelete || c.Action == plan.ActionReplace {
			return api.GitDisruptionDelete
		}
		for _, s := range c.Steps {
			rank := api.DisruptionRank(s.Disruption)
			if rank < 0 {
				return api.GitDisruptionDelete
			}
			worst = max(worst, rank)
		}
	}
	return levels[worst]
}

// summary is one line per object a plan changes.
func summary(resp *apiv1.PlanResponse) []string {
	var out []string
	for _, c := range resp.Plan.Clusters {
		if c.Action != plan.ActionNoOp {
			out = append(out, fmt.Sprintf("%s %s/%s (%d steps)", c.Action, api.KindKubernetesCluster, c.Name, len(c.Steps)))
		}
	}
	for _, u := range resp.Updates {
		if u.Action != apiv1.UpdateNoOp {
			out = append(out, fmt.Sprintf("%s %s/%s", u.Action, api.KindClusterUpdate, u.Name))
		}
	}
	if len(out) > api.MaxGitOwned {
		out = append(out[:api.MaxGitOwned], fmt.Sprintf("and %d more", len(out)-api.MaxGitOwned))
	}
	return out
}
