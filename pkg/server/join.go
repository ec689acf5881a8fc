package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/store"
)

// tokenRecord is the data of a stored KindJoinToken; its name is the
// token's SHA-256, so the token itself is never stored.
type tokenRecord struct {
	Expires   string `json:"expires"`
	CreatedBy string `json:"createdBy"`
}

func tokenName(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// credentialRecord is the data of a stored KindCredential: what was issued
// to whom, never the key.
type credentialRecord struct {
	Role     string `json:"role"`
	Name     string `json:"name"`
	Serial   string `json:"serial"`
	NotAfter string `json:"notAfter"`
	IssuedBy string `json:"issuedBy"`
}

func (s *Server) createToken(c *call) (any, error) {
	var req apiv1.TokenRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	ttl := apiv1.DefaultTokenTTL
	if req.TTL != "" {
		d, err := time.ParseDuration(req.TTL)
		if err != nil || d <= 0 {
			return nil, badRequest("parse ttl %q: want a positive duration such as 24h", req.TTL)
		}
		ttl = d
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate token: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	expires := s.now().Add(ttl).UTC().Format(time.RFC3339)
	data, err := json.Marshal(tokenRecord{Expires: expires, CreatedBy: c.subject()})
	if err != nil {
		return nil, fmt.Errorf("encode token: %w", err)
	}
	name := tokenName(token)
	c.object = apiv1.KindJoinToken + "/" + name[:12]
	if _, err := s.apply(c.r.Context(), store.Put{Kind: apiv1.KindJoinToken, Name: name, Data: data, ExpectModifyIndex: store.Expect(0)}); err != nil {
		return nil, err
	}
	return apiv1.TokenResponse{Token: token, Expires: expires}, nil
}

// errBadToken is the one answer to every join-token failure, so a caller
// learns nothing about which tokens exist.
func errBadToken() *apiError {
	return newError(apiv1.CodeUnauthenticated, "join token is invalid, expired or already used")
}

// join exchanges a one-time token for a node certificate. The token is
// consumed through raft with a CAS delete, so two concurrent joins with one
// token cannot both succeed.
func (s *Server) join(c *call) (any, error) {
	var req apiv1.JoinRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	if !validName(req.NodeID) {
		return nil, badRequest("nodeId %q: want 1-253 characters of a-z, 0-9, '-' and '.'", req.NodeID)
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
	exp, err := time.Parse(time.RFC3339, rec.Expires)
	if err != nil {
		return nil, fmt.Errorf("decode join token expiry: %w", err)
	}
	expired := !s.now().Before(exp)
	if _, err := s.apply(c.r.Context(), store.Delete{Kind: apiv1.KindJoinToken, Name: name, ExpectModifyIndex: store.Expect(cur.ModifyIndex)}); err != nil {
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			return nil, errBadToken()
		}
		return nil, err
	}
	if expired {
		return nil, errBadToken()
	}
	kp, err := s.issue(c.r.Context(), pki.CertRequest{
		CommonName:   req.NodeID,
		Organization: []string{apiv1.RoleNode},
		Usage:        pki.UsageClient,
		Validity:     s.validity,
	}, "join-token")
	if err != nil {
		return nil, err
	}
	return apiv1.JoinResponse{Cert: string(kp.CertPEM), Key: string(kp.KeyPEM), CA: string(s.ca.CertPEM)}, nil
}

func (s *Server) issueCert(c *call) (any, error) {
	var req apiv1.CertRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	switch req.Role {
	case apiv1.RoleViewer, apiv1.RoleOperator, apiv1.RoleClusterAdmin:
	default:
		return nil, badRequest("role %q: want viewer, operator or cluster-admin", req.Role)
	}
	if req.Name == "" || len(req.Name) > 128 {
		return nil, badRequest("name must be 1-128 characters")
	}
	c.object = apiv1.KindCredential + "/" + req.Role + "/" + req.Name
	kp, err := s.issue(c.r.Context(), pki.CertRequest{
		CommonName:   req.Name,
		Organization: []string{req.Role},
		Usage:        pki.UsageClient,
		Validity:     s.validity,
	}, c.subject())
	if err != nil {
		return nil, err
	}
	return apiv1.CertResponse{Cert: string(kp.CertPEM), Key: string(kp.KeyPEM), CA: string(s.ca.CertPEM)}, nil
}

// issue signs a certificate and records it (without the key) as a
// KindCredential named "<role>/<name>/<serial>".
func (s *Server) issue(ctx context.Context, req pki.CertRequest, issuedBy string) (pki.KeyPair, error) {
	kp, err := s.ca.Issue(req, s.now())
	if err != nil {
		return pki.KeyPair{}, fmt.Errorf("issue certificate for %s: %w", req.CommonName, err)
	}
	cert, err := pki.ParseCert(kp.CertPEM)
	if err != nil {
		return pki.KeyPair{}, err
	}
	rec := credentialRecord{
		Role: req.Organization[0], Name: req.CommonName, Serial: cert.SerialNumber.Text(16),
		NotAfter: cert.NotAfter.UTC().Format(time.RFC3339), IssuedBy: issuedBy,
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return pki.KeyPair{}, fmt.Errorf("encode credential: %w", err)
	}
	name := rec.Role + "/" + rec.Name + "/" + rec.Serial
	if _, err := s.apply(ctx, store.Put{Kind: apiv1.KindCredential, Name: name, Data: data}); err != nil {
		return pki.KeyPair{}, err
	}
	return kp, nil
}

// validName accepts node ids: 1-253 characters of a-z, 0-9, '-' and '.'.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && r != '.' {
			return false
		}
	}
	return true
}
