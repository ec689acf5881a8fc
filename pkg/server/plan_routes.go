package server

import (
	"encoding/json"
	"errors"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/planapply"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/store"
)

// readView reads clusters, updates, nodes and controller replicas at one store index: it reads
// again when a command was applied while it read. The nodes carry the
// readiness this replica's heartbeats say.
func (s *Server) readView() (*planapply.View, error) {
	st := s.backend.State()
	for {
		before := st.LastIndex()
		v, err := planapply.NewView(before, st.List(api.KindKubernetesCluster), st.List(api.KindClusterUpdate), st.List(api.KindNode))
		if err != nil {
			return nil, err
		}
		v.Controllers = apiv1.ControllerReplicas(st.List(apiv1.KindMember))
		if st.LastIndex() != before {
			continue
		}
		for _, n := range v.Nodes {
			if ready, last, ok := s.liveness(n.Metadata.Name); ok {
				n.Status.Ready, n.Status.LastHeartbeat = ready, last
			}
		}
		return v, nil
	}
}

// renderOptioner is a Backend that knows the orchestrator's render options
// (the controller's does); plans render with them. Without it plans render
// with the defaults.
type renderOptioner interface {
	RenderOptions() render.Options
}

// renderOptions are the options plans render with.
func (s *Server) renderOptions() render.Options {
	if ro, ok := s.backend.(renderOptioner); ok {
		return ro.RenderOptions()
	}
	return render.Options{}
}

// planPost answers POST /v1/plan at the leader-confirmed current index.
func (s *Server) planPost(c *call) (any, error) {
	var req apiv1.PlanRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	v, err := s.readView()
	if err != nil {
		return nil, err
	}
	resp, err := planapply.Plan(v, req, s.renderOptions())
	if err != nil {
		return nil, err
	}
	if err := mayApply(c.role(), req); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			resp.Forbidden = ae.body.Message
		}
	}
	return resp, nil
}

// applyPost answers POST /v1/apply: planapply.Commit recomputes the plan
// the caller reviewed, refuses it when anything it depends on changed or
// when it is blocked, and returns every change as one batch with CAS on
// each touched object, which is committed atomically.
func (s *Server) applyPost(c *call) (any, error) {
	var req apiv1.ApplyRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	c.planHash = req.Hash
	c.object = applyObject(req.Request)
	if err := mayApply(c.role(), req.Request); err != nil {
		return nil, err
	}
	v, err := s.readView()
	if err != nil {
		return nil, err
	}
	ops, out, err := planapply.Commit(v, req, s.renderOptions(), s.now())
	if err != nil {
		return nil, commitError(err)
	}
	if len(ops) == 0 {
		c.skipAudit = true
		return out, nil
	}
	idx, err := s.apply(c.r.Context(), store.Batch{Ops: ops})
	if err != nil {
		return nil, err
	}
	out.Index = idx
	return out, nil
}

// commitError maps a refused commit to its API error: a replace to 400, a
// stale plan to 409 stale-plan, a blocked one to 409 plan-blocked with the
// issues in its details.
func commitError(err error) error {
	var (
		re *planapply.ReplaceError
		se *planapply.StaleError
		be *planapply.BlockedError
	)
	switch {
	case errors.As(err, &re):
		return badRequest("%s", re.Error())
	case errors.As(err, &se):
		return newError(apiv1.CodeStalePlan, "%s: run plan again", se.Reason)
	case errors.As(err, &be):
		e := newError(apiv1.CodePlanBlocked, "%s", be.Error())
		if b, err := json.Marshal(be.Issues); err == nil {
			e.body.Details = map[string]string{apiv1.DetailIssues: string(b)}
		}
		return e
	}
	return err
}

// applyObject names what an apply touches, for its audit entry.
func applyObject(req apiv1.PlanRequest) string {
	var names []string
	for _, c := range req.Clusters {
		names = append(names, api.KindKubernetesCluster+"/"+c.Metadata.Name)
	}
	for _, n := range req.Delete {
		names = append(names, api.KindKubernetesCluster+"/"+n)
	}
	if req.Scale != nil {
		names = append(names, api.KindKubernetesCluster+"/"+req.Scale.Cluster)
	}
	for _, u := range req.Updates {
		names = append(names, api.KindClusterUpdate+"/"+u.Metadata.Name)
	}
	for _, n := range req.DeleteUpdates {
		names = append(names, api.KindClusterUpdate+"/"+n)
	}
	if req.Prune {
		names = append(names, "prune")
	}
	return strings.Join(names, ",")
}

// mayApply lets cluster-admin apply anything and operator only plans that
// scale or touch only ClusterUpdates.
func mayApply(role string, req apiv1.PlanRequest) error {
	if role == apiv1.RoleClusterAdmin {
		return nil
	}
	clusters := len(req.Clusters) > 0 || len(req.Delete) > 0 || len(req.Recreate) > 0 || req.Prune
	if role == apiv1.RoleOperator && !clusters {
		return nil
	}
	return forbidden("role %q may not apply changes to KubernetesCluster objects; an operator may apply scale plans and ClusterUpdates", role)
}
