package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
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

// mayWrite applies the per-kind write rules: cluster-admin writes every
// kind, operator only ClusterUpdate.
func mayWrite(c *call, kind string) error {
	if c.role() == apiv1.RoleClusterAdmin || (c.role() == apiv1.RoleOperator && kind == api.KindClusterUpdate) {
		return nil
	}
	return forbidden("role %q may not write %s objects", c.role(), kind)
}

// writableKind refuses kinds only the controller itself writes.
func writableKind(kind string) error {
	switch kind {
	case apiv1.KindAudit, apiv1.KindAuditPolicy, apiv1.KindJoinToken, apiv1.KindMember, apiv1.KindCredential, apiv1.KindRevocation, apiv1.KindNodeIdentity:
		return badRequest("%s objects are written by the controller, not through /v1/objects", kind)
	}
	return nil
}

func (s *Server) putObject(c *call) (any, error) {
	kind, name := kindOf(c), c.r.PathValue("name")
	if err := mayWrite(c, kind); err != nil {
		return nil, err
	}
	if err := readIntent(c, kind); err != nil {
		return nil, err
	}
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

// decodeObject reads a PUT body: the object model's kinds are decoded
// strictly into their type, defaulted and validated; Secrets are sealed;
// any other kind must be one JSON value.
func (s *Server) decodeObject(c *call, kind, name string) (json.RawMessage, error) {
	switch kind {
	case api.KindKubernetesCluster:
		var o api.KubernetesCluster
		if err := decodeStrict(c.r.Body, &o); err != nil {
			return nil, err
		}
		if err := checkMeta(kind, name, api.CanonicalKind(o.Kind), o.Metadata.Name); err != nil {
			return nil, err
		}
		o.Kind = kind
		o.Default()
		if is := o.Validate(); is.HasErrors() {
			return nil, badRequest("validate %s/%s: %v", kind, name, is.Errors())
		}
		return json.Marshal(o)
	case api.KindClusterUpdate:
		var o api.ClusterUpdate
		if err := decodeStrict(c.r.Body, &o); err != nil {
			return nil, err
		}
		if err := checkMeta(kind, name, api.CanonicalKind(o.Kind), o.Metadata.Name); err != nil {
			return nil, err
		}
		o.Kind = kind
		o.Default()
		if is := o.Validate(); is.HasErrors() {
			return nil, badRequest("validate %s/%s: %v", kind, name, is.Errors())
		}
		return json.Marshal(o)
	case apiv1.KindSecret:
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
	return readJSONValue(c.r.Body)
}

// checkMeta requires the body's kind and name to match the path.
func checkMeta(kind, name, bodyKind, bodyName string) error {
	if bodyKind != kind {
		return badRequest("body kind %q does not match path kind %q", bodyKind, kind)
	}
	if bodyName != name {
		return badRequest("body metadata.name %q does not match path name %q", bodyName, name)
	}
	return nil
}

func (s *Server) deleteObject(c *call) (any, error) {
	kind, name := kindOf(c), c.r.PathValue("name")
	if err := mayWrite(c, kind); err != nil {
		return nil, err
	}
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

// readIntent takes the caller's declared intent (apiv1.HeaderIntent) of a
// ClusterUpdate write; any other kind, or an intent not in
// apiv1.UpdateIntents, is refused.
func readIntent(c *call, kind string) error {
	v := c.r.Header.Get(apiv1.HeaderIntent)
	if v == "" {
		return nil
	}
	if kind != api.KindClusterUpdate || !slices.Contains(apiv1.UpdateIntents(), v) {
		return badRequest("%s %q: only a ClusterUpdate write may declare an intent, one of %v", apiv1.HeaderIntent, v, apiv1.UpdateIntents())
	}
	c.intent = v
	return nil
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
