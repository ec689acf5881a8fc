package server

import (
	"encoding/json"
	"fmt"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/store"
)

// redacted replaces secret file contents for callers other than the node
// (and, on /v1/objects, cluster-admin).
const redacted = "<redacted>"

// nodeState answers the NodeStates rendered for node {id} (names
// "<cluster>/<id>"). Secret files are opened for the node itself and
// redacted for everyone else.
func (s *Server) nodeState(c *call) (any, error) {
	id := c.r.PathValue("id")
	idx, err := s.block(c, api.KindNodeState, "")
	if err != nil {
		return nil, err
	}
	items := []apiv1.Object{}
	for _, o := range s.backend.State().List(api.KindNodeState) {
		if !strings.HasSuffix(o.Name, "/"+id) {
			continue
		}
		data, err := s.exposeNodeState(o, c.role() == apiv1.RoleNode)
		if err != nil {
			return nil, err
		}
		out := toAPI(o)
		out.Data = data
		items = append(items, out)
	}
	setIndex(c.w, idx)
	return apiv1.List{Index: idx, Items: items}, nil
}

// exposeNodeState opens (forNode) or redacts the secret files of a stored
// NodeState. A file counts as secret when it is marked so or its content
// is sealed.
func (s *Server) exposeNodeState(o store.Object, forNode bool) (json.RawMessage, error) {
	var ns api.NodeState
	if err := json.Unmarshal(o.Data, &ns); err != nil {
		return nil, fmt.Errorf("decode %s/%s: %w", o.Kind, o.Name, err)
	}
	changed := false
	for i := range ns.Files {
		f := &ns.Files[i]
		if !f.Secret && !secrets.IsSealedString(f.Content) {
			continue
		}
		changed = true
		switch {
		case !forNode:
			f.Content = redacted
		case secrets.IsSealedString(f.Content):
			pt, err := s.keyring.OpenString(o.Kind, o.Name, f.Content)
			if err != nil {
				return nil, fmt.Errorf("open secret file %s of %s: %w", f.Path, o.Name, err)
			}
			f.Content = pt
		}
	}
	if !changed {
		return o.Data, nil
	}
	return json.Marshal(ns)
}

func (s *Server) putFacts(c *call) (any, error) {
	id := c.r.PathValue("id")
	var facts api.NodeFacts
	if err := decodeStrict(c.r.Body, &facts); err != nil {
		return nil, err
	}
	node := api.Node{APIVersion: api.APIVersion, Kind: api.KindNode, Metadata: api.ObjectMeta{Name: id}, Facts: facts}
	var expect *uint64
	if cur, ok := s.backend.State().Get(api.KindNode, id); ok {
		var old api.Node
		if err := json.Unmarshal(cur.Data, &old); err == nil {
			oldFacts, _ := json.Marshal(old.Facts)
			newFacts, _ := json.Marshal(facts)
			if sameJSON(oldFacts, newFacts) {
				c.skipAudit = true
				return apiv1.WriteResponse{Index: cur.ModifyIndex}, nil
			}
			node.Status = old.Status
			node.Metadata.Labels = old.Metadata.Labels
		}
		expect = store.Expect(cur.ModifyIndex)
	}
	data, err := json.Marshal(node)
	if err != nil {
		return nil, fmt.Errorf("encode node %s: %w", id, err)
	}
	idx, err := s.apply(c.r.Context(), store.Put{Kind: api.KindNode, Name: id, Data: data, ExpectModifyIndex: expect})
	if err != nil {
		return nil, err
	}
	return apiv1.WriteResponse{Index: idx}, nil
}

func (s *Server) heartbeat(c *call) (any, error) {
	var empty struct{}
	if c.r.ContentLength != 0 {
		if err := decodeStrict(c.r.Body, &empty); err != nil {
			return nil, err
		}
	}
	s.seenMu.Lock()
	s.lastSeen[c.r.PathValue("id")] = s.now()
	s.seenMu.Unlock()
	return empty, nil
}
