package server

import (
	"encoding/json"
	"fmt"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// minCommitPrefix is the shortest commit prefix approve accepts.
const minCommitPrefix = 7

// storedGitSource reads a GitSource and its status, not-found when absent.
func (s *Server) storedGitSource(name string) (api.GitSource, store.Object, error) {
	st := s.backend.State()
	o, ok := st.Get(api.KindGitSource, name)
	if !ok {
		return api.GitSource{}, store.Object{}, notFound("%s/%s not found", api.KindGitSource, name)
	}
	var g api.GitSource
	if err := json.Unmarshal(o.Data, &g); err != nil {
		return api.GitSource{}, store.Object{}, fmt.Errorf("decode stored git source %s: %w", name, err)
	}
	if so, ok := st.Get(api.KindGitSourceStatus, name); ok {
		if err := json.Unmarshal(so.Data, &g.Status); err != nil {
			return api.GitSource{}, store.Object{}, fmt.Errorf("decode stored git source status %s: %w", name, err)
		}
	}
	return g, o, nil
}

// putGitSource answers PUT /v1/gitops/{name}: it creates the source or
// replaces its spec, keeping what users asked of it.
func (s *Server) putGitSource(c *call) (any, error) {
	name := c.r.PathValue("name")
	c.object = api.KindGitSource + "/" + name
	var spec api.GitSourceSpec
	if err := decodeStrict(c.r.Body, &spec); err != nil {
		return nil, err
	}
	g := api.GitSource{Metadata: api.ObjectMeta{Name: name}, Spec: spec}
	var expect *uint64
	if old, o, err := s.storedGitSource(name); err == nil {
		g.Requests = old.Requests
		expect = store.Expect(o.ModifyIndex)
	} else {
		expect = store.Expect(0)
	}
	g.Default()
	if is := g.Validate(); is.HasErrors() {
		return nil, badRequest("validate %s/%s: %v", api.KindGitSource, name, is.Errors())
	}
	return s.writeGitSource(c, g, expect)
}

// writeGitSource stores g (without its status) with its audit entry.
func (s *Server) writeGitSource(c *call, g api.GitSource, expect *uint64) (any, error) {
	g.Status = api.GitSourceStatus{}
	data, err := json.Marshal(g)
	if err != nil {
		return nil, fmt.Errorf("encode git source %s: %w", g.Metadata.Name, err)
	}
	idx, err := s.applyAudited(c, store.Op{Put: &store.Put{Kind: api.KindGitSource, Name: g.Metadata.Name, Data: data, ExpectModifyIndex: expect}})
	if err != nil {
		return nil, err
	}
	return apiv1.WriteResponse{Index: idx}, nil
}

// deleteGitSource answers DELETE /v1/gitops/{name}: the source stops being
// followed; the objects it wrote stay, with their annotations.
func (s *Server) deleteGitSource(c *call) (any, error) {
	name := c.r.PathValue("name")
	c.object = api.KindGitSource + "/" + name
	_, o, err := s.storedGitSource(name)
	if err != nil {
		return nil, err
	}
	ops := []store.Op{{Delete: &store.Delete{Kind: api.KindGitSource, Name: name, ExpectModifyIndex: store.Expect(o.ModifyIndex)}}}
	if _, ok := s.backend.State().Get(api.KindGitSourceStatus, name); ok {
		ops = append(ops, store.Op{Delete: &store.Delete{Kind: api.KindGitSourceStatus, Name: name}})
	}
	idx, err := s.applyAudited(c, ops...)
	if err != nil {
		return nil, err
	}
	return apiv1.WriteResponse{Index: idx}, nil
}

// syncGitSource answers POST /v1/gitops/{name}/sync: the leader fetches
// the source at once.
func (s *Server) syncGitSource(c *call) (any, error) {
	name := c.r.PathValue("name")
	c.object = api.KindGitSource + "/" + name
	g, o, err := s.storedGitSource(name)
	if err != nil {
		return nil, err
	}
	g.Requests.Sync++
	return s.writeGitSource(c, g, store.Expect(o.ModifyIndex))
}

// approveGitSource answers POST /v1/gitops/{name}/approve: the pending
// plan of the named commit may be applied.
func (s *Server) approveGitSource(c *call) (any, error) {
	name := c.r.PathValue("name")
	var req apiv1.GitApproveRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	g, o, err := s.storedGitSource(name)
	if err != nil {
		return nil, err
	}
	p := g.Status.Pending
	switch {
	case p == nil:
		return nil, newError(apiv1.CodeConflict, "%s/%s has no pending plan", api.KindGitSource, name)
	case len(req.Commit) < minCommitPrefix || !strings.HasPrefix(p.Commit, req.Commit):
		return nil, newError(apiv1.CodeConflict, "the pending plan is for commit %s, not %q", p.Commit, req.Commit)
	case p.Reason == api.GitPendingBlocked:
		return nil, newError(apiv1.CodePlanBlocked, "the plan of commit %s is blocked: %s", p.Commit, strings.Join(p.Blocking, "; "))
	}
	c.object = api.KindGitSource + "/" + name + "@" + p.Commit
	c.planHash = p.Hash
	g.Requests.Approve, g.Requests.ApproveHash = p.Commit, p.Hash
	return s.writeGitSource(c, g, store.Expect(o.ModifyIndex))
}

// getGitSource answers GET /v1/gitops/{name} with the source, its status
// and its drift.
func (s *Server) getGitSource(c *call) (any, error) {
	g, o, err := s.storedGitSource(c.r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	return apiv1.GitSourceView{Source: g, Drift: s.drift(g), Index: o.ModifyIndex}, nil
}

// listGitSources answers GET /v1/gitops.
func (s *Server) listGitSources(c *call) (any, error) {
	out := []apiv1.GitSourceView{}
	for _, o := range s.backend.State().List(api.KindGitSource) {
		g, so, err := s.storedGitSource(o.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, apiv1.GitSourceView{Source: g, Drift: s.drift(g), Index: so.ModifyIndex})
	}
	return out, nil
}

// drift lists the objects g owns whose stored spec is not the one g wrote.
func (s *Server) drift(g api.GitSource) []apiv1.GitDrift {
	st := s.backend.State()
	var out []apiv1.GitDrift
	for _, ow := range g.Status.Owned {
		o, ok := st.Get(ow.Kind, ow.Name)
		if !ok {
			out = append(out, apiv1.GitDrift{Kind: ow.Kind, Name: ow.Name, Reason: apiv1.DriftDeleted})
			continue
		}
		if api.StoredSpecHash(o.Data) != ow.SpecHash {
			out = append(out, apiv1.GitDrift{Kind: ow.Kind, Name: ow.Name, Reason: apiv1.DriftChanged})
		}
	}
	return out
}
