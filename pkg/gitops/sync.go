package gitops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
)

// Condition types and reasons a GitSource's status records.
const (
	CondFetched = "Fetched"
	CondSynced  = "Synced"

	ReasonFetchFailed      = "FetchFailed"
	ReasonInvalid          = "InvalidManifests"
	ReasonOwnership        = "OwnedElsewhere"
	ReasonBlocked          = "PlanBlocked"
	ReasonAwaitingApproval = "AwaitingApproval"
	ReasonApplyFailed      = "ApplyFailed"
	ReasonEmptyCommit      = "EmptyCommit"
	ReasonBusy             = "Busy"
	ReasonSynced           = "Synced"
)

// ErrOwnedElsewhere: a commit declares an object another GitSource owns.
var ErrOwnedElsewhere = errors.New("owned by another git source")

// approved reports whether g's requests approve pending as it stands.
func approved(g api.GitSource, pending *api.GitPending) bool {
	return pending != nil && pending.Reason == api.GitPendingApproval &&
		g.Requests.Approve == pending.Commit && g.Requests.ApproveHash == pending.Hash
}

// sync fetches g and plans, applies or holds its commit; it returns the
// status to store.
func (r *Runner) sync(ctx context.Context, g api.GitSource) api.GitSourceStatus {
	now := r.cfg.Now()
	name := g.Metadata.Name
	r.fetched[name] = now
	st := g.Status
	st.Conditions = slices.Clone(st.Conditions)
	force := g.Requests.Sync > st.SyncHandled
	st.SyncHandled = g.Requests.Sync
	snap, err := r.cfg.Fetcher.Fetch(ctx, Request{Name: name, Repo: g.Spec.Repo, Branch: g.Spec.Branch, Path: g.Spec.Path})
	if err != nil {
		r.log.Warn("fetch git source", "name", name, "err", err)
		fail(&st, CondFetched, ReasonFetchFailed, err, now)
		return st
	}
	st.Fetched, st.FetchedAt = snap.Commit, stamp(now)
	setCondition(&st, CondFetched, "True", "Fetched", "fetched "+short(snap.Commit), now)
	switch {
	case force:
	case snap.Commit == st.Commit && st.Pending == nil && condStatus(st, CondSynced) == "True":
		return st
	case st.Pending != nil && st.Pending.Commit == snap.Commit && !approved(g, st.Pending):
		return st
	}
	r.planCommit(ctx, g, snap, &st, now)
	return st
}

// planCommit makes the one plan of a commit and applies it or holds it.
func (r *Runner) planCommit(ctx context.Context, g api.GitSource, snap Snapshot, st *api.GitSourceStatus, now time.Time) {
	name := g.Metadata.Name
	d, err := parse(snap)
	if err != nil {
		fail(st, CondSynced, ReasonInvalid, fmt.Errorf("commit %s: %w", short(snap.Commit), err), now)
		return
	}
	req, err := r.request(g, d)
	if err != nil {
		fail(st, CondSynced, ReasonOwnership, fmt.Errorf("commit %s: %w", short(snap.Commit), err), now)
		return
	}
	var busy []string
	resp, err := r.cfg.Planner.PlanGit(req)
	if err == nil && resp.Blocked() {
		// A busy cluster waits; the rest of the commit goes ahead.
		if busy = busyClusters(resp.Plan.Blocking); len(busy) > 0 {
			req = without(req, busy)
			resp, err = r.cfg.Planner.PlanGit(req)
		}
	}
	if err != nil {
		fail(st, CondSynced, ReasonApplyFailed, fmt.Errorf("plan commit %s: %w", short(snap.Commit), err), now)
		return
	}
	pending := &api.GitPending{Commit: snap.Commit, Hash: contentHash(resp), Disruption: disruption(resp), Summary: summary(resp)}
	if resp.Blocked() {
		pending.Reason = api.GitPendingBlocked
		for _, i := range resp.Plan.Blocking {
			pending.Blocking = append(pending.Blocking, bound(i.Code+": "+i.Message))
		}
		st.Pending = pending
		fail(st, CondSynced, ReasonBlocked, fmt.Errorf("commit %s: the plan is blocked: %s", short(snap.Commit), strings.Join(pending.Blocking, "; ")), now)
		return
	}
	if resp.Changes() {
		gated := g.Spec.Policy == api.GitPolicyApprove || api.DisruptionRank(pending.Disruption) > api.DisruptionRank(g.Spec.MaxDisruption)
		if gated && !approved(g, st.Pending) {
			pending.Reason = api.GitPendingApproval
			st.Pending = pending
			msg := fmt.Sprintf("commit %s waits for `kctl gitops approve %s %s`: its disruption %s is over the policy's (%s, max %s)", short(snap.Commit), name, short(snap.Commit), pending.Disruption, g.Spec.Policy, g.Spec.MaxDisruption)
			setCondition(st, CondSynced, "False", ReasonAwaitingApproval, msg, now)
			st.LastError = ""
			return
		}
		if _, err := r.cfg.Planner.ApplyGit(ctx, apiv1.GitStamp{Source: name, Commit: snap.Commit}, req, resp); err != nil {
			// Nothing was applied: plan the commit again on the next pass.
			st.Pending = nil
			delete(r.fetched, name)
			fail(st, CondSynced, ReasonApplyFailed, fmt.Errorf("apply commit %s: %w", short(snap.Commit), err), now)
			return
		}
	}
	st.Pending = nil
	st.Commit, st.SyncedAt, st.LastError = snap.Commit, stamp(now), ""
	st.Owned = r.owned(name)
	switch {
	case len(busy) > 0:
		setCondition(st, CondSynced, "False", ReasonBusy, fmt.Sprintf("commit %s applied except %s, which is busy; it is planned again on the next fetch", short(snap.Commit), strings.Join(busy, ", ")), now)
	case d.empty() && !g.Spec.AllowEmpty:
		setCondition(st, CondSynced, "False", ReasonEmptyCommit, fmt.Sprintf("commit %s holds no manifest under %q: nothing was pruned (the source does not allow empty)", short(snap.Commit), g.Spec.Path), now)
	default:
		setCondition(st, CondSynced, "True", ReasonSynced, "applied commit "+short(snap.Commit), now)
	}
}

// busyClusters names the clusters a plan is blocked on only because they
// are busy; nil when any other issue blocks it.
func busyClusters(issues []plan.Issue) []string {
	var out []string
	for _, i := range issues {
		if i.Code != plan.CodeClusterBusy || i.Cluster == "" {
			return nil
		}
		if !slices.Contains(out, i.Cluster) {
			out = append(out, i.Cluster)
		}
	}
	return out
}

// without drops the named clusters from req.
func without(req apiv1.PlanRequest, names []string) apiv1.PlanRequest {
	req.Clusters = slices.DeleteFunc(slices.Clone(req.Clusters), func(c api.KubernetesCluster) bool { return slices.Contains(names, c.Metadata.Name) })
	req.Delete = slices.DeleteFunc(slices.Clone(req.Delete), func(n string) bool { return slices.Contains(names, n) })
	return req
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// short is a commit's abbreviation.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
