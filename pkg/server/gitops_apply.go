package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/planapply"
	"kcore.dev/kcore/pkg/store"
)

// The git-following loop (pkg/gitops) plans and applies through the three
// methods below: the same view and the same planapply.Plan and
// planapply.Commit as POST /v1/plan and POST /v1/apply, so a commit is
// planned and applied exactly as `kctl kubernetes apply` would plan and
// apply its directory.

// gitopsRole is the role recorded on the audit entries of a GitSource's applies.
const gitopsRole = apiv1.RoleController

// PlanGit computes the plan of req against the current stored state.
func (s *Server) PlanGit(req apiv1.PlanRequest) (*apiv1.PlanResponse, error) {
	v, err := s.readView()
	if err != nil {
		return nil, err
	}
	return planapply.Plan(v, req, s.renderOptions())
}

// ApplyGit commits the plan resp of req as POST /v1/apply would (refused
// as stale when anything it depends on changed, or as blocked), records
// stamp's source and commit on every object it writes and commits its
// audit entry in the same raft entry. It returns 0 when the plan changes
// nothing.
func (s *Server) ApplyGit(ctx context.Context, stamp apiv1.GitStamp, req apiv1.PlanRequest, resp *apiv1.PlanResponse) (uint64, error) {
	v, err := s.readView()
	if err != nil {
		return 0, err
	}
	ops, out, err := planapply.Commit(v, apiv1.ApplyRequest{Request: req, Index: resp.Plan.Index, Hash: resp.Hash}, s.renderOptions(), s.now())
	if err != nil {
		return 0, commitError(err)
	}
	if len(ops) == 0 {
		return 0, nil
	}
	if err := stampOps(ops, stamp); err != nil {
		return 0, err
	}
	entry, err := json.Marshal(apiv1.AuditEntry{
		Time: s.now().UTC().Format(time.RFC3339Nano), ID: newID(),
		Subject: "gitops/" + stamp.Source, Role: gitopsRole, Method: http.MethodPost,
		Route: apiv1.GitSourcePath(stamp.Source), Action: "gitops apply",
		Object: applyObject(req), PlanHash: out.Hash, Commit: stamp.Commit, Result: http.StatusOK,
	})
	if err != nil {
		return 0, fmt.Errorf("encode audit entry: %w", err)
	}
	return s.apply(ctx, s.auditBatch(ops, entry))
}

// stampOps records the source and commit on every cluster and update the
// batch creates or changes; a cluster being deleted keeps its annotations.
func stampOps(ops []store.Op, stamp apiv1.GitStamp) error {
	for _, op := range ops {
		if op.Put == nil {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(op.Put.Data, &obj); err != nil {
			return fmt.Errorf("stamp %s/%s: %w", op.Put.Kind, op.Put.Name, err)
		}
		var meta api.ObjectMeta
		if err := json.Unmarshal(obj["metadata"], &meta); err != nil {
			return fmt.Errorf("stamp %s/%s: %w", op.Put.Kind, op.Put.Name, err)
		}
		var st struct {
			Phase string `json:"phase"`
		}
		_ = json.Unmarshal(obj["status"], &st)
		if st.Phase == api.PhaseDeleting {
			continue
		}
		meta.Annotations = maps.Clone(meta.Annotations)
		if meta.Annotations == nil {
			meta.Annotations = map[string]string{}
		}
		meta.Annotations[api.AnnotationGitSource] = stamp.Source
		meta.Annotations[api.AnnotationGitCommit] = stamp.Commit
		b, err := json.Marshal(meta)
		if err != nil {
			return fmt.Errorf("stamp %s/%s: %w", op.Put.Kind, op.Put.Name, err)
		}
		obj["metadata"] = b
		if op.Put.Data, err = json.Marshal(obj); err != nil {
			return fmt.Errorf("stamp %s/%s: %w", op.Put.Kind, op.Put.Name, err)
		}
	}
	return nil
}

// WriteGitStatus stores a GitSource's status with CAS on the status object
// (expect 0: it must not exist yet), as the leader's loop sees it.
func (s *Server) WriteGitStatus(ctx context.Context, name string, st api.GitSourceStatus, expect uint64) (uint64, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return 0, fmt.Errorf("encode git source status %s: %w", name, err)
	}
	return s.apply(ctx, store.Batch{Ops: []store.Op{{Put: &store.Put{Kind: api.KindGitSourceStatus, Name: name, Data: data, ExpectModifyIndex: store.Expect(expect)}}}})
}
