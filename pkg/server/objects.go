package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// kindOf returns the canonical kind of a path's {kind}: the object model's
// aliases are accepted, any other kind is used as written.
func kindOf(c *call) string {
	k := c.r.PathValue("kind")
	if ck := api.CanonicalKind(k); ck != "" {
		return ck
	}
	return k
}

// withheld reports whether a kind is never returned with its data.
func withheld(kind string) bool {
	switch kind {
	case apiv1.KindSecret, apiv1.KindJoinToken, apiv1.KindCredential, apiv1.KindEtcdSnapshot:
		return true
	}
	return false
}

func toAPI(o store.Object) apiv1.Object {
	out := apiv1.Object{
		Kind: o.Kind, Name: o.Name,
		CreateIndex: o.CreateIndex, ModifyIndex: o.ModifyIndex,
		CreateTime: o.CreateTime, ModifyTime: o.ModifyTime,
	}
	if !withheld(o.Kind) {
		out.Data = o.Data
	}
	return out
}

func (s *Server) listObjects(c *call) (any, error) {
	kind := kindOf(c)
	st := s.backend.State()
	idx, err := s.block(c, kind, "")
	if err != nil {
		return nil, err
	}
	items := []apiv1.Object{}
	for _, o := range st.List(kind) {
		out, err := s.present(c, o)
		if err != nil {
			return nil, err
		}
		items = append(items, out)
	}
	setIndex(c.w, idx)
	return apiv1.List{Index: idx, Items: items}, nil
}

func (s *Server) getObject(c *call) (any, error) {
	kind, name := kindOf(c), c.r.PathValue("name")
	idx, err := s.block(c, kind, name)
	if err != nil {
		return nil, err
	}
	o, ok := s.backend.State().Get(kind, name)
	setIndex(c.w, idx)
	if !ok {
		return nil, notFound("%s/%s not found", kind, name)
	}
	return s.present(c, o)
}

// present is an object as /v1/objects returns it to the caller: withheld
// kinds without data, Nodes with their readiness as the leader sees it,
// and NodeStates with their secret files redacted for
// every role but cluster-admin, who sees them sealed, as in a snapshot.
// (Nodes read their own NodeStates, opened, through /v1/nodes/{id}/state.)
func (s *Server) present(c *call, o store.Object) (apiv1.Object, error) {
	out := toAPI(o)
	if o.Kind == api.KindNode {
		return s.withLiveness(out)
	}
	if o.Kind != api.KindNodeState || c.role() == apiv1.RoleClusterAdmin {
		return out, nil
	}
	data, err := s.exposeNodeState(o, false)
	if err != nil {
		return apiv1.Object{}, err
	}
	out.Data = data
	return out, nil
}

// casParam parses ?cas=N into an ExpectModifyIndex.
func casParam(c *call) (*uint64, error) {
	v := c.r.URL.Query().Get(apiv1.ParamCAS)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return nil, badRequest("parse %s=%q: %v", apiv1.ParamCAS, v, err)
	}
	return store.Expect(n), nil
}

// planOnly refuses a PUT or DELETE of /v1/objects of a kind that changes
// only through plan and apply (POST /v1/apply) and the update action
// routes, for every role: a raw write would skip the plan's checks
// (immutable fields, quorum, volumes) and its review. It runs before the
// role check (route.refuse), so every caller with a certificate gets the
// same answer, naming the command to use, and the refusal is audited.
func planOnly(c *call) error {
	kind, name := kindOf(c), c.r.PathValue("name")
	var use string
	switch {
	case kind == api.KindKubernetesCluster && c.r.Method == http.MethodDelete:
		use = "delete it with kctl kubernetes delete " + name
	case kind == api.KindKubernetesCluster:
		use = "apply its manifest with kctl kubernetes apply -f FILE"
	case kind == api.KindClusterUpdate && c.r.Method == http.MethodDelete:
		use = "a ClusterUpdate is not deleted; stop it with kctl update pause " + name + " or kctl update rollback " + name
	case kind == api.KindClusterUpdate:
		use = "apply its manifest with kctl apply -f FILE, and steer it with kctl update approve|pause|resume|rollback " + name
	default:
		return nil
	}
	c.w.Header().Set("Allow", http.MethodGet)
	return newError(apiv1.CodePlanRequired, "%s objects change only through plan and apply, never through %s %s: %s", kind, c.r.Method, apiv1.PathObjects, use)
}

// writableKind refuses kinds only the controller itself writes.
func writableKind(kind string) error {
	switch kind {
	case apiv1.KindAudit, apiv1.KindAuditPolicy, apiv1.KindJoinToken, apiv1.KindMember, apiv1.KindCredential, apiv1.KindRevocation, apiv1.KindNodeIdentity:
		return badRequest("%s objects are written by the controller, not through /v1/objects", kind)
	case api.KindGitSource, api.KindGitSourceStatus:
		return badRequest("%s objects are written through %s (kctl gitops), not through /v1/objects", kind, apiv1.PathGitOps)
	}
	return nil
}

func (s *Server) putObject(c *call) (any, error) {
	kind, name := kindOf(c), c.r.PathValue("name")
	if err := writableKind(kind); err != nil {
		return nil, err
	}
	expect, err := casParam(c)
	if err != nil {
		return nil, err
	}
	data, err := s.decodeObject(c, kind, name)
	if err != nil {
		return nil, err
	}
	idx, err := s.applyAudited(c, store.Op{Put: &store.Put{Kind: kind, Name: name, Data: data, ExpectModifyIndex: expect}})
	if err != nil {
		return nil, err
	}
	return apiv1.WriteResponse{Index: idx}, nil
}

// decodeObject reads a PUT body: Secrets are sealed; any other kind must
// be one JSON value. (KubernetesClusters and ClusterUpdates never get
// here: see planOnly.)
func (s *Server) decodeObject(c *call, kind, name string) (json.RawMessage, error) {
	if kind != apiv1.KindSecret {
		return readJSONValue(c.r.Body)
	}
	plain, err := readJSONValue(c.r.Body)
	if err != nil {
		return nil, err
	}
	sealed, err := s.keyring.Seal(kind, name, plain)
	if err != nil {
		return nil, err
	}
	return json.Marshal(sealed)
}

func (s *Server) deleteObject(c *call) (any, error) {
	kind, name := kindOf(c), c.r.PathValue("name")
	if kind == apiv1.KindAudit || kind == apiv1.KindAuditPolicy {
		return nil, badRequest("audit entries and their retention cannot be deleted")
	}
	if kind == apiv1.KindRevocation {
		return nil, badRequest("revocations cannot be deleted: they are dropped once the certificate expires")
	}
	expect, err := casParam(c)
	if err != nil {
		return nil, err
	}
	idx, err := s.applyAudited(c, store.Op{Delete: &store.Delete{Kind: kind, Name: name, ExpectModifyIndex: expect}})
	if err != nil {
		return nil, err
	}
	return apiv1.WriteResponse{Index: idx}, nil
}

// sameJSON reports whether two JSON documents are equal after compaction.
func sameJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// withLiveness fills a Node's status (ready, last heartbeat) from the
// heartbeats this replica received, as plans do. Only the leader receives
// heartbeats, so a follower answering a stale read, like a leader that has
// not heard from the node yet, leaves the status as stored.
func (s *Server) withLiveness(out apiv1.Object) (apiv1.Object, error) {
	if s.backend.RaftState() != apiv1.StateLeader {
		return out, nil
	}
	var n api.Node
	if err := json.Unmarshal(out.Data, &n); err != nil {
		return apiv1.Object{}, fmt.Errorf("decode node %s: %w", out.Name, err)
	}
	ready, last, ok := s.liveness(out.Name)
	if !ok {
		return out, nil
	}
	n.Status = api.NodeHealth{Ready: ready, LastHeartbeat: last}
	data, err := json.Marshal(n)
	if err != nil {
		return apiv1.Object{}, fmt.Errorf("encode node %s: %w", out.Name, err)
	}
	out.Data = data
	return out, nil
}
