package orchestrator

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// Condition types the orchestrator writes.
const (
	CondNodesApplied      = "NodesApplied"
	CondNodesHeartbeating = "NodesHeartbeating"
	CondEtcdHealthy       = "EtcdHealthy"
	CondAPIReady          = "APIReady"
	CondEtcdMembership    = "EtcdMembership"
	// CondBootstrapped turns True the first time the cluster is ready and
	// stays: etcd then exists, so new control planes join it.
	CondBootstrapped = api.ConditionBootstrapped
)

// Condition statuses.
const (
	StatusTrue    = "True"
	StatusFalse   = "False"
	StatusUnknown = "Unknown"
)

// observation is what the agents reported about a cluster's members.
type observation struct {
	nodes      []api.NodeStatus
	allApplied bool
	failed     []string
	// churn lists units crashed and being restarted, not crash-looping:
	// pending in a transitional phase, a failure in phase ready.
	churn     []string
	pending   []string
	heartbeat api.Condition
}

// observe compares each member's report with the generation it was given.
func (o *Orchestrator) observe(c *api.KubernetesCluster, gens map[string]int64, reports map[string]*reportObj, now time.Time) observation {
	ob := observation{allApplied: true}
	cps := map[string]bool{}
	for _, n := range c.Spec.ControlPlaneNodes {
		cps[n.NodeID] = true
	}
	var silent, unseen []string
	o.churn.begin()
	defer o.churn.end(c.Metadata.Name)
	for _, m := range c.Spec.Members() {
		ns := api.NodeStatus{NodeID: m.NodeID, Role: api.RoleWorker}
		if cps[m.NodeID] {
			ns.Role = api.RoleControlPlane
		}
		gen, published := gens[m.NodeID]
		rep := reports[m.NodeID]
		var failed, churn, pending []string
		switch {
		case !published:
			pending = append(pending, "not published yet")
		case rep == nil:
			pending = append(pending, fmt.Sprintf("no report yet for generation %d", gen))
		default:
			ns.ObservedGeneration = rep.r.ObservedGeneration
			if rep.r.ObservedGeneration != gen {
				pending = append(pending, fmt.Sprintf("applied generation %d of %d", rep.r.ObservedGeneration, gen))
				break
			}
			for _, it := range rep.r.Items {
				switch it.State {
				case api.ItemOK:
				case api.ItemFailed:
					msg := fmt.Sprintf("%s %s failed: %s", it.Kind, it.Name, it.Message)
					if o.churn.restarting(c.Metadata.Name, m.NodeID, it, now) {
						churn = append(churn, msg)
						break
					}
					failed = append(failed, msg)
				default:
					pending = append(pending, fmt.Sprintf("%s %s %s", it.Kind, it.Name, it.State))
				}
			}
		}
		seen, ok := o.lastSeen(m.NodeID)
		switch {
		case o.cfg.LastSeen == nil:
		case !ok && now.Sub(o.started) > o.cfg.HeartbeatTimeout:
			unseen = append(unseen, m.NodeID)
		case ok && now.Sub(seen) > o.cfg.HeartbeatTimeout:
			silent = append(silent, fmt.Sprintf("%s (last %s)", m.NodeID, seen.UTC().Format(time.RFC3339)))
		}
		for _, f := range failed {
			ob.failed = append(ob.failed, m.NodeID+": "+f)
		}
		for _, f := range churn {
			ob.churn = append(ob.churn, m.NodeID+": "+f)
		}
		if len(pending)+len(churn) > 0 {
			ob.pending = append(ob.pending, m.NodeID)
		}
		ns.Ready = len(failed) == 0 && len(churn) == 0 && len(pending) == 0
		if !ns.Ready {
			ob.allApplied = false
			ns.Message = strings.Join(slices.Concat(failed, churn, pending), "; ")
		}
		ob.nodes = append(ob.nodes, ns)
	}
	ob.heartbeat = heartbeatCondition(o.cfg.LastSeen != nil, silent, unseen)
	return ob
}

func (o *Orchestrator) lastSeen(id string) (time.Time, bool) {
	if o.cfg.LastSeen == nil {
		return time.Time{}, false
	}
	return o.cfg.LastSeen(id)
}

func heartbeatCondition(known bool, silent, unseen []string) api.Condition {
	switch {
	case !known:
		return api.Condition{Type: CondNodesHeartbeating, Status: StatusUnknown, Reason: "NoHeartbeatSource"}
	case len(silent)+len(unseen) == 0:
		return api.Condition{Type: CondNodesHeartbeating, Status: StatusTrue, Reason: "Heartbeating", Message: "every member heartbeats"}
	}
	var parts []string
	if len(silent) > 0 {
		parts = append(parts, "no heartbeat from "+strings.Join(silent, ", "))
	}
	if len(unseen) > 0 {
		parts = append(parts, "never heard from "+strings.Join(unseen, ", "))
	}
	return api.Condition{Type: CondNodesHeartbeating, Status: StatusFalse, Reason: "HeartbeatMissing", Message: strings.Join(parts, "; ")}
}

func appliedCondition(ob observation) api.Condition {
	switch {
	case len(ob.failed) > 0:
		return api.Condition{Type: CondNodesApplied, Status: StatusFalse, Reason: "ItemFailed", Message: strings.Join(slices.Concat(ob.failed, ob.churn), "; ")}
	case len(ob.churn) > 0:
		return api.Condition{Type: CondNodesApplied, Status: StatusFalse, Reason: "UnitRestarting", Message: strings.Join(ob.churn, "; ")}
	case !ob.allApplied:
		return api.Condition{Type: CondNodesApplied, Status: StatusFalse, Reason: "Applying", Message: "waiting for " + strings.Join(ob.pending, ", ")}
	}
	return api.Condition{Type: CondNodesApplied, Status: StatusTrue, Reason: "Applied", Message: "every member applied its state"}
}

func healthConditions(h Health) []api.Condition {
	cond := func(typ string, r CheckResult) api.Condition {
		if r.OK {
			return api.Condition{Type: typ, Status: StatusTrue, Reason: "Healthy", Message: r.Message}
		}
		return api.Condition{Type: typ, Status: StatusFalse, Reason: "CheckFailed", Message: r.Message}
	}
	return []api.Condition{cond(CondEtcdHealthy, h.Etcd), cond(CondAPIReady, h.API)}
}

// findCondition returns the condition of type typ, or nil.
func findCondition(cs []api.Condition, typ string) *api.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

// isTrue reports whether the condition typ is True.
func isTrue(cs []api.Condition, typ string) bool {
	c := findCondition(cs, typ)
	return c != nil && c.Status == StatusTrue
}

// setCondition sets c in cs, keeping Since when the status did not change.
func setCondition(cs []api.Condition, c api.Condition, now time.Time) []api.Condition {
	if old := findCondition(cs, c.Type); old != nil {
		c.Since = old.Since
		if old.Status != c.Status || c.Since == "" {
			c.Since = now.UTC().Format(time.RFC3339)
		}
		*old = c
		return cs
	}
	c.Since = now.UTC().Format(time.RFC3339)
	cs = append(cs, c)
	slices.SortFunc(cs, func(a, b api.Condition) int { return strings.Compare(a.Type, b.Type) })
	return cs
}

// transitional reports whether the phase waits for every member to apply.
func transitional(phase string) bool {
	switch phase {
	case api.PhaseBootstrapping, api.PhaseUpdating, api.PhaseScaling, "":
		return true
	}
	return false
}

// nextPhase decides the phase from the current one, what was published and
// what the conditions say; waiting (an etcd membership step or a node still
// leaving) keeps a transitional phase. A failed item degrades any phase; a
// unit crashed and being restarted (ob.churn) degrades phase ready but is
// only not applied yet in a transitional phase. Add-ons unavailable beyond
// their grace (addonsDown, see addonsOverdue) degrade phase ready and keep
// a cluster degraded; a transitional phase does not wait for them.
func nextPhase(cur string, conds []api.Condition, ob observation, published, waiting, addonsDown bool) string {
	phase := cur
	if phase == "" {
		phase = api.PhaseBootstrapping
		if isTrue(conds, CondBootstrapped) {
			phase = api.PhaseUpdating
		}
	}
	if published && (phase == api.PhaseReady || phase == api.PhaseDegraded) {
		phase = api.PhaseUpdating
	}
	healthy := isTrue(conds, CondAPIReady) && isTrue(conds, CondEtcdHealthy)
	if hb := findCondition(conds, CondNodesHeartbeating); hb != nil && hb.Status == StatusFalse {
		healthy = false
	}
	if ro := findCondition(conds, CondRollout); ro != nil && ro.Status == StatusFalse {
		healthy = false
	}
	switch {
	case len(ob.failed) > 0:
		return api.PhaseDegraded
	case transitional(phase):
		if ob.allApplied && healthy && !waiting {
			return api.PhaseReady
		}
		return phase
	case phase == api.PhaseReady && (!healthy || len(ob.churn) > 0 || addonsDown):
		return api.PhaseDegraded
	case phase == api.PhaseDegraded && ob.allApplied && healthy && !addonsDown:
		return api.PhaseReady
	}
	return phase
}

// sameStatus reports whether two statuses are equal, ignoring
// LastHealthCheck unless withHealth (a health pass writes its time; other
// passes write it only together with another change).
func sameStatus(a, b api.ClusterStatus, withHealth bool) bool {
	if !withHealth {
		a.LastHealthCheck, b.LastHealthCheck = "", ""
	}
	if len(a.Conditions) == 0 {
		a.Conditions = nil
	}
	if len(b.Conditions) == 0 {
		b.Conditions = nil
	}
	return reflect.DeepEqual(a, b)
}
