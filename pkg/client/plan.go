package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
)

// Plan asks the controller for the plan of req, computed against its
// current stored state at a leader-confirmed index.
func (c *Client) Plan(ctx context.Context, req apiv1.PlanRequest) (*apiv1.PlanResponse, error) {
	var out apiv1.PlanResponse
	if _, err := c.call(ctx, request{method: http.MethodPost, path: apiv1.PathPlan}, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Apply applies the plan the user reviewed: req sent again with that plan's
// index and hash. The controller refuses it with a stale-plan error
// (IsStalePlan) when anything changed since, and with plan-blocked
// (BlockingIssues) when it is blocked.
func (c *Client) Apply(ctx context.Context, req apiv1.PlanRequest, index uint64, hash string) (apiv1.ApplyResponse, error) {
	var out apiv1.ApplyResponse
	body := apiv1.ApplyRequest{Request: req, Index: index, Hash: hash}
	if _, err := c.call(ctx, request{method: http.MethodPost, path: apiv1.PathApply}, body, &out); err != nil {
		return apiv1.ApplyResponse{}, err
	}
	return out, nil
}

// IsStalePlan reports whether err is the controller refusing a plan made
// before the stored state changed.
func IsStalePlan(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == apiv1.CodeStalePlan
}

// BlockingIssues returns the issues of a plan-blocked refusal, and whether
// err is one.
func BlockingIssues(err error) ([]plan.Issue, bool) {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != apiv1.CodePlanBlocked {
		return nil, false
	}
	var issues []plan.Issue
	if raw := ae.Details[apiv1.DetailIssues]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &issues)
	}
	return issues, true
}
