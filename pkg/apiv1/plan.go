package apiv1

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/rollout"
)

// Route paths of plan and apply.
const (
	// PathPlan computes a plan: POST PlanRequest → PlanResponse.
	PathPlan = "/v1/plan"
	// PathApply applies a reviewed plan: POST ApplyRequest → ApplyResponse.
	PathApply = "/v1/apply"
)

// Error codes of POST /v1/apply (both 409).
const (
	// CodeStalePlan: the stored state changed since the plan was computed.
	CodeStalePlan = "stale-plan"
	// CodePlanBlocked: the plan has blocking issues; Details["issues"] holds them as JSON.
	CodePlanBlocked = "plan-blocked"
)

// DetailIssues is the ErrorBody.Details key of a plan-blocked answer: the
// blocking issues as a JSON array of plan.Issue.
const DetailIssues = "issues"

// Actions of an UpdatePlan.
const (
	UpdateCreate = "create"
	UpdateUpdate = "update"
	UpdateNoOp   = "no-op"
	UpdateDelete = "delete"
)

// PlanRequest is the body of POST /v1/plan, and the request part of POST /v1/apply.
type PlanRequest struct {
	// Clusters are the desired KubernetesClusters from the manifests.
	Clusters []api.KubernetesCluster `json:"clusters,omitempty"`
	// Updates are the desired ClusterUpdates from the manifests.
	Updates []api.ClusterUpdate `json:"updates,omitempty"`
	// Prune deletes stored clusters that Clusters does not name.
	Prune bool `json:"prune,omitempty"`
	// Scale is a membership change of one stored cluster.
	Scale *plan.ScaleRequest `json:"scale,omitempty"`
	// Delete names stored clusters to delete.
	Delete []string `json:"delete,omitempty"`
	// DeleteUpdates names stored ClusterUpdates to remove: each must be
	// pending (never started), done or failed.
	DeleteUpdates []string `json:"deleteUpdates,omitempty"`
	// Recreate names stored clusters to tear down and create again.
	Recreate []string `json:"recreate,omitempty"`
	// Force asks the orchestrator to tear a deleted cluster down even where
	// nodes do not answer (recorded on the cluster; the plan is the same).
	Force bool `json:"force,omitempty"`
	// PurgeVolumes asks the orchestrator to also remove the volumes kcore
	// created for a deleted cluster, with their data.
	PurgeVolumes bool `json:"purgeVolumes,omitempty"`
}

// ApplyRequest is the body of POST /v1/apply: the request a plan was made
// from and the index and hash of that plan as the user reviewed it.
type ApplyRequest struct {
	// Request is the plan's request, sent again unchanged.
	Request PlanRequest `json:"request"`
	// Index is the PlanResponse's Plan.Index.
	Index uint64 `json:"index"`
	// Hash is the PlanResponse's Hash.
	Hash string `json:"hash"`
}

// UpdatePlan is what happens to one ClusterUpdate.
type UpdatePlan struct {
	// Name of the ClusterUpdate.
	Name string `json:"name"`
	// Action is create, update, delete or no-op.
	Action string `json:"action"`
	// Diff lists the changed spec fields of an update.
	Diff []plan.FieldChange `json:"diff,omitempty"`
	// Desired is what is stored (defaulted spec, no status); nil for no-op.
	Desired *api.ClusterUpdate `json:"desired,omitempty"`
	// Rollout is the rollout the update will run (pkg/rollout), for create
	// and update. Its blocking issues stop the rollout from starting, not
	// the update from being stored.
	Rollout *rollout.RolloutPlan `json:"rollout,omitempty"`
}

// PlanResponse answers POST /v1/plan.
type PlanResponse struct {
	// Plan is the clusters' plan; blocking issues and warnings about
	// ClusterUpdates are listed in it too.
	Plan *plan.Plan `json:"plan"`
	// Updates are the ClusterUpdates' plans, sorted by name.
	Updates []UpdatePlan `json:"updates,omitempty"`
	// Hash is what apply must send back: CombinedHash of the plan, its
	// issues, the update plans and the delete options.
	Hash string `json:"hash"`
	// Forbidden says why the caller's role may not apply this plan; empty
	// when it may. It is not part of the hash: it is about the caller, not
	// the plan.
	Forbidden string `json:"forbidden,omitempty"`
}

// Changes reports whether applying the plan would change anything.
func (r *PlanResponse) Changes() bool {
	if r.Plan != nil && r.Plan.Changes() {
		return true
	}
	for _, u := range r.Updates {
		if u.Action != UpdateNoOp {
			return true
		}
	}
	return false
}

// Blocked reports whether the plan must not be applied.
func (r *PlanResponse) Blocked() bool { return r.Plan != nil && r.Plan.Blocked() }

// CombinedHash is the hash apply must send back for a plan: the hex
// SHA-256 over the plan's own hash (its index and clusters), its blocking
// issues and warnings, the update plans and the request's delete options,
// so a plan whose warnings changed is as stale as one whose steps did.
func CombinedHash(p *plan.Plan, updates []UpdatePlan, req PlanRequest) string {
	b, err := json.Marshal(struct {
		Plan         string       `json:"plan"`
		Blocking     []plan.Issue `json:"blocking"`
		Warnings     []plan.Issue `json:"warnings"`
		Updates      []UpdatePlan `json:"updates"`
		Force        bool         `json:"force"`
		PurgeVolumes bool         `json:"purgeVolumes"`
	}{p.Hash, p.Blocking, p.Warnings, updates, req.Force, req.PurgeVolumes})
	if err != nil {
		// Only strings, numbers, bools, slices and string-keyed maps: always marshals.
		panic(fmt.Sprintf("hash plan: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ApplyResponse answers POST /v1/apply.
type ApplyResponse struct {
	// Index is the raft index the change was committed at; 0 when the plan
	// had no changes and nothing was written.
	Index uint64 `json:"index"`
	// Hash is the applied plan's hash.
	Hash string `json:"hash"`
	// Clusters names the clusters written, with the phase each was set to.
	Clusters map[string]string `json:"clusters,omitempty"`
	// Updates names the ClusterUpdates written.
	Updates []string `json:"updates,omitempty"`
	// DeletedUpdates names the ClusterUpdates removed.
	DeletedUpdates []string `json:"deletedUpdates,omitempty"`
}
