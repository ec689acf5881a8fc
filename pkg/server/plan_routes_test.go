package server

import (
	"errors"
	"maps"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/planapply"
	"kcore.dev/kcore/pkg/render"
)

func TestMayApply(t *testing.T) {
	cluster := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{{Metadata: api.ObjectMeta{Name: "lab"}}}}
	scale := apiv1.PlanRequest{Scale: &plan.ScaleRequest{Cluster: "lab", Remove: []string{"n1"}}}
	updates := apiv1.PlanRequest{Updates: []api.ClusterUpdate{{Metadata: api.ObjectMeta{Name: "u1"}}}}
	tests := []struct {
		name string
		role string
		req  apiv1.PlanRequest
		ok   bool
	}{
		{"admin applies clusters", apiv1.RoleClusterAdmin, cluster, true},
		{"operator scales", apiv1.RoleOperator, scale, true},
		{"operator applies updates", apiv1.RoleOperator, updates, true},
		{"operator applies a cluster", apiv1.RoleOperator, cluster, false},
		{"operator deletes", apiv1.RoleOperator, apiv1.PlanRequest{Delete: []string{"lab"}}, false},
		{"operator prunes", apiv1.RoleOperator, apiv1.PlanRequest{Prune: true}, false},
		{"viewer applies updates", apiv1.RoleViewer, updates, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mayApply(tt.role, tt.req)
			var ae *apiError
			if tt.ok != (err == nil) || (err != nil && (!errors.As(err, &ae) || ae.body.Code != apiv1.CodeForbidden)) {
				t.Fatalf("mayApply = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestApplyObject(t *testing.T) {
	tests := []struct {
		req  apiv1.PlanRequest
		want string
	}{
		{apiv1.PlanRequest{Delete: []string{"lab"}}, "KubernetesCluster/lab"},
		{apiv1.PlanRequest{Updates: []api.ClusterUpdate{{Metadata: api.ObjectMeta{Name: "u1"}}}}, "ClusterUpdate/u1"},
		{apiv1.PlanRequest{Prune: true, Clusters: []api.KubernetesCluster{{Metadata: api.ObjectMeta{Name: "a"}}}}, "KubernetesCluster/a,prune"},
		{apiv1.PlanRequest{Prune: true, Clusters: []api.KubernetesCluster{{Metadata: api.ObjectMeta{Name: "a"}}, {Metadata: api.ObjectMeta{Name: "b"}}}}, "KubernetesCluster/a,KubernetesCluster/b,prune"},
	}
	for _, tt := range tests {
		if got := applyObject(tt.req); got != tt.want {
			t.Errorf("applyObject = %q, want %q", got, tt.want)
		}
	}
}

// Plans render with the orchestrator's render options, which the server
// takes from its backend (pkg/planapply tests that they reach the plan).
func TestRenderOptionsFromBackend(t *testing.T) {
	s := &Server{backend: optionsBackend{opts: render.Options{Profile: render.ProfileLab}}}
	if s.renderOptions().Profile != render.ProfileLab {
		t.Fatal("the server does not take the render options from its backend")
	}
	if (&Server{backend: optionsBackend{}}).renderOptions().Profile != "" {
		t.Fatal("a backend without options does not give the defaults")
	}
}

// A refused commit answers with its API code: a replace 400, a stale plan
// 409 stale-plan with the reason, a blocked plan 409 plan-blocked with the
// issues as JSON in its details; anything else passes through.
func TestCommitError(t *testing.T) {
	issues := []plan.Issue{{Code: plan.CodeQuorumLoss, Cluster: "lab"}}
	other := errors.New("decode stored cluster lab: boom")
	tests := []struct {
		name    string
		err     error
		code    string
		message string
		details map[string]string
	}{
		{"replace", &planapply.ReplaceError{Cluster: "lab"}, apiv1.CodeBadRequest, "replace is planned but not applied yet: delete the cluster (kctl kubernetes delete lab --wait), then apply its manifest", nil},
		{"stale", &planapply.StaleError{Index: 7, Reason: "KubernetesCluster/lab changed since this plan was made (index 7)"}, apiv1.CodeStalePlan, "KubernetesCluster/lab changed since this plan was made (index 7): run plan again", nil},
		{"blocked", &planapply.BlockedError{Issues: issues}, apiv1.CodePlanBlocked, "the plan is blocked by 1 issue(s): quorum-loss", map[string]string{apiv1.DetailIssues: `[{"code":"quorum-loss","cluster":"lab","message":""}]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ae *apiError
			if !errors.As(commitError(tt.err), &ae) {
				t.Fatalf("commitError(%v) is no API error", tt.err)
			}
			if ae.body.Code != tt.code || ae.body.Message != tt.message || !maps.Equal(ae.body.Details, tt.details) {
				t.Fatalf("commitError = %+v, want %s %q %v", ae.body, tt.code, tt.message, tt.details)
			}
		})
	}
	if err := commitError(other); err != other {
		t.Fatalf("commitError(%v) = %v, want it unchanged", other, err)
	}
}

// optionsBackend is a Backend that only knows render options.
type optionsBackend struct {
	Backend
	opts render.Options
}

func (b optionsBackend) RenderOptions() render.Options { return b.opts }
