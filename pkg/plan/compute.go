package plan

import (
	"fmt"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// job is one cluster's part of the request.
type job struct {
	name    string
	action  string
	desired *api.KubernetesCluster // prepared; nil for delete
	stored  *api.KubernetesCluster // prepared; nil for create
	phase   string                 // the stored cluster's phase
	scale   *ScaleRequest
	force   bool // a delete asked with --force
}

// Compute plans Input: it never modifies its input and is deterministic.
func Compute(in Input) *Plan {
	e := newEnv(in)
	p := &Plan{Version: FormatVersion, Index: in.Index, Clusters: []ClusterPlan{}}
	jobs := collectJobs(in, e, p)
	for _, j := range jobs {
		b := &builder{env: e, plan: p, cluster: j.name}
		var cp ClusterPlan
		switch {
		case j.scale != nil:
			cp = b.planScale(j)
		case j.action == ActionCreate:
			cp = b.planCreate(j)
		case j.action == ActionReplace:
			cp = b.planReplace(j)
		case j.action == ActionDelete:
			cp = b.planDelete(j)
		default:
			cp = b.planUpdate(j)
		}
		if _, ok := e.stored[j.name]; ok {
			cp.StoredGeneration, cp.StoredPhase = e.generation[j.name], e.phase[j.name]
		}
		p.Clusters = append(p.Clusters, cp)
	}
	p.Hash = hashOf(p)
	return p
}

// collectJobs turns the request into one job per cluster, sorted by name,
// and blocks requests that name a cluster twice or a cluster that is not stored.
func collectJobs(in Input, e *env, p *Plan) []job {
	jobs := map[string]*job{}
	conflict := func(name, what string) {
		p.Blocking = append(p.Blocking, Issue{
			Code: CodeConflictingRequest, Cluster: name,
			Message: fmt.Sprintf("cluster %q is %s in the same request", name, what),
			Fix:     "apply, scale and delete one cluster in separate commands, and keep one manifest per cluster name",
		})
	}
	notFound := func(name, cmd string) {
		p.Blocking = append(p.Blocking, Issue{
			Code: CodeClusterNotFound, Cluster: name,
			Message: fmt.Sprintf("no stored cluster is named %q", name),
			Fix:     fmt.Sprintf("check the name with `kctl kubernetes list`; %s works only on stored clusters", cmd),
		})
	}
	for _, name := range in.Delete {
		if jobs[name] != nil {
			conflict(name, "deleted twice")
			continue
		}
		st := e.stored[name]
		if st == nil {
			notFound(name, "delete")
			continue
		}
		jobs[name] = &job{name: name, action: ActionDelete, stored: st, phase: e.phase[name], force: in.Force}
	}
	for _, d := range in.Desired {
		if d == nil {
			continue
		}
		c := prepared(d)
		name := c.Metadata.Name
		if jobs[name] != nil {
			if jobs[name].action == ActionDelete {
				conflict(name, "both deleted and applied")
			} else {
				conflict(name, "declared by more than one manifest")
			}
			continue
		}
		j := &job{name: name, action: ActionCreate, desired: c, stored: e.stored[name], phase: e.phase[name]}
		if j.stored != nil {
			j.action = ActionUpdate
			if slices.Contains(in.Recreate, name) {
				j.action = ActionReplace
			}
		}
		jobs[name] = j
	}
	if in.Prune {
		for _, name := range e.storedNames {
			// A cluster already being deleted is on its way out: pruning it
			// again would change nothing, and blocking on it would hold
			// back every other cluster's change.
			if jobs[name] == nil && e.phase[name] != api.PhaseDeleting {
				jobs[name] = &job{name: name, action: ActionDelete, stored: e.stored[name], phase: e.phase[name]}
			}
		}
	}
	if s := in.Scale; s != nil {
		switch {
		case jobs[s.Cluster] != nil:
			conflict(s.Cluster, "both scaled and applied or deleted")
		case e.stored[s.Cluster] == nil:
			notFound(s.Cluster, "scale")
		default:
			jobs[s.Cluster] = &job{name: s.Cluster, action: ActionUpdate, stored: e.stored[s.Cluster], phase: e.phase[s.Cluster], scale: s}
		}
	}
	out := make([]job, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, *j)
	}
	slices.SortFunc(out, func(a, b job) int { return strings.Compare(a.name, b.name) })
	return out
}
