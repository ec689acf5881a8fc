package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// tokenRecord is the data of a stored KindJoinToken; its name is the
// token's SHA-256, so the token itself is never stored.
type tokenRecord struct {
	Expires   string `json:"expires"`
	CreatedBy string `json:"createdBy"`
	// NodeID is the one node id the token registers.
	NodeID string `json:"nodeId"`
	// Rekey lets the token re-key a registered node (revoking its earlier
	// certificates); without it the token registers only a new node.
	Rekey bool `json:"rekey,omitempty"`
}

func tokenName(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// parseTokenTTL reads a token lifetime: empty is DefaultTokenTTL, anything
// else must lie within [MinTokenTTL, MaxTokenTTL].
func parseTokenTTL(s string) (time.Duration, error) {
	if s == "" {
		return apiv1.DefaultTokenTTL, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < apiv1.MinTokenTTL || d > apiv1.MaxTokenTTL {
		return 0, badRequest("ttl %q: want a duration from %s to %s, such as 1h", s, apiv1.MinTokenTTL, fmtDays(apiv1.MaxTokenTTL))
	}
	return d, nil
}

// fmtDays prints whole days as "7d" (time.Duration has no day unit).
func fmtDays(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd (%s)", d/(24*time.Hour), d)
	}
	return d.String()
}

// createToken makes a one-time join token bound to one node id. A plain
// token is refused for a node that is registered already (409), and a
// re-key token for one that is not (409): the caller is cluster-admin, so
// these answers leak nothing the caller cannot read anyway.
func (s *Server) createToken(c *call) (any, error) {
	var req apiv1.TokenRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	if err := api.CheckNodeID(req.NodeID); err != nil {
		return nil, badRequest("nodeId: %w", err)
	}
	c.object = "Node/" + req.NodeID
	ttl, err := parseTokenTTL(req.TTL)
	if err != nil {
		return nil, err
	}
	registered := s.registered(req.NodeID)
	switch {
	case registered && !req.Rekey:
		return nil, newError(apiv1.CodeConflict, "node %q is registered already: create a re-key token (--rekey), which revokes its earlier certificates", req.NodeID)
	case !registered && req.Rekey:
		return nil, newError(apiv1.CodeConflict, "node %q is not registered: create a join token without --rekey", req.NodeID)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate token: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	expires := s.now().Add(ttl).UTC().Format(time.RFC3339)
	data, err := json.Marshal(tokenRecord{Expires: expires, CreatedBy: c.subject(), NodeID: req.NodeID, Rekey: req.Rekey})
	if err != nil {
		return nil, fmt.Errorf("encode token: %w", err)
	}
	if _, err := s.apply(c.r.Context(), store.Put{Kind: apiv1.KindJoinToken, Name: tokenName(token), Data: data, ExpectModifyIndex: store.Expect(0)}); err != nil {
		return nil, err
	}
	return apiv1.TokenResponse{Token: token, Expires: expires, NodeID: req.NodeID, Rekey: req.Rekey}, nil
}

// errBadToken is the one answer to every join-token failure (unknown,
// expired, used, made for another node id, or a plain token for a node that
// is registered already), so a caller learns nothing about which tokens or
// nodes exist.
func errBadToken() *apiError {
	return newError(apiv1.CodeUnauthenticated, "join token is invalid, expired or already used")
}

// registered reports whether node id holds, or has held, an identity: its
// NodeIdentity record, a Node object (facts it reported with a
// certificate), or a recorded node certificate. A registered node gets a
// new certificate only through a re-key token or by renewing its own.
func (s *Server) registered(id string) bool {
	st := s.backend.State()
	if _, ok := st.Get(apiv1.KindNodeIdentity, id); ok {
		return true
	}
	if _, ok := st.Get(api.KindNode, id); ok {
		return true
	}
	return len(st.ListPrefix(apiv1.KindCredential, credentialPrefix(apiv1.RoleNode, id))) > 0
}

// join exchanges a one-time token for a node certificate. The token names
// the one node id it registers; a token for another id, or a plain token
// for a registered node, fails like an unknown token and stays unused.
// Consuming the token (CAS delete), claiming the node's identity (CAS put),
// recording the certificate and, for a re-key, revoking every earlier
// certificate of the node commit in one raft entry: two joins racing for one
// token or one node cannot both succeed.
func (s *Server) join(c *call) (any, error) {
	var req apiv1.JoinRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	if err := api.CheckNodeID(req.NodeID); err != nil {
		return nil, badRequest("nodeId: %w", err)
	}
	c.object = "Node/" + req.NodeID
	if req.CSR != "" {
		return nil, badRequest("csr is not supported yet: omit it and the controller generates the key")
	}
	name := tokenName(req.Token)
	cur, ok := s.backend.State().Get(apiv1.KindJoinToken, name)
	if req.Token == "" || !ok {
		return nil, errBadToken()
	}
	var rec tokenRecord
	if err := json.Unmarshal(cur.Data, &rec); err != nil {
		return nil, fmt.Errorf("decode join token: %w", err)
	}
	if rec.NodeID != req.NodeID {
		return nil, errBadToken()
	}
	exp, err := time.Parse(time.RFC3339, rec.Expires)
	if err != nil {
		return nil, fmt.Errorf("decode join token expiry: %w", err)
	}
	consume := store.Op{Delete: &store.Delete{Kind: apiv1.KindJoinToken, Name: name, ExpectModifyIndex: store.Expect(cur.ModifyIndex)}}
	if !s.now().Before(exp) {
		// An expired token is of no use to anyone: drop it.
		if _, err := s.apply(c.r.Context(), *consume.Delete); err != nil && !isCASFailure(err) {
			return nil, err
		}
		return nil, errBadToken()
	}
	var expect uint64
	if cur, ok := s.backend.State().Get(apiv1.KindNodeIdentity, req.NodeID); ok {
		expect = cur.ModifyIndex
	}
	if !rec.Rekey && s.registered(req.NodeID) {
		return nil, errBadToken()
	}
	issuedBy := "join-token"
	if rec.Rekey {
		issuedBy = "rekey-token"
	}
	kp, err := s.issueNode(c, nodeIssue{id: req.NodeID, issuedBy: issuedBy, expect: expect, revoke: rec.Rekey, extra: []store.Op{consume}})
	if isCASFailure(err) {
		return nil, errBadToken()
	}
	if err != nil {
		return nil, err
	}
	return apiv1.JoinResponse{Cert: string(kp.CertPEM), Key: string(kp.KeyPEM), CA: string(s.ca.CertPEM)}, nil
}

// isCASFailure reports whether err is a failed compare-and-set.
func isCASFailure(err error) bool {
	return errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound)
}
