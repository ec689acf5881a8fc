package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/store"
)

// credentialRecord is the data of a stored KindCredential: what was issued
// to whom, never the key. Records of expired certificates are dropped when
// the same role and name get a new certificate.
type credentialRecord struct {
	Role     string `json:"role"`
	Name     string `json:"name"`
	Serial   string `json:"serial"`
	NotAfter string `json:"notAfter"`
	IssuedBy string `json:"issuedBy"`
}

// MaxLiveNodeCerts bounds the unexpired certificates one node may hold:
// a renewal past it is refused, so a node (or a stolen node key) cannot
// mint certificates without end. An agent holds about two (it renews at
// two thirds of the lifetime); a re-key is never refused by it.
const MaxLiveNodeCerts = 8

// credentialPrefix is the store-name prefix of role/name's credential records.
func credentialPrefix(role, name string) string { return role + "/" + name + "/" }

// identityRecord is the data of a KindNodeIdentity: the node's newest
// certificate. Every change to a node's certificates rewrites it with a CAS.
type identityRecord struct {
	Serial   string `json:"serial"`
	NotAfter string `json:"notAfter"`
	IssuedBy string `json:"issuedBy"`
}

// sign issues a certificate and returns it with the Put that records it
// (without the key) as a KindCredential named "<role>/<name>/<serial>".
func (s *Server) sign(req pki.CertRequest, issuedBy string) (pki.KeyPair, credentialRecord, store.Op, error) {
	kp, err := s.ca.Issue(req, s.now())
	if err != nil {
		return pki.KeyPair{}, credentialRecord{}, store.Op{}, fmt.Errorf("issue certificate for %s: %w", req.CommonName, err)
	}
	cert, err := pki.ParseCert(kp.CertPEM)
	if err != nil {
		return pki.KeyPair{}, credentialRecord{}, store.Op{}, err
	}
	rec := credentialRecord{
		Role: req.Organization[0], Name: req.CommonName, Serial: serialText(cert.SerialNumber),
		NotAfter: cert.NotAfter.UTC().Format(time.RFC3339), IssuedBy: issuedBy,
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return pki.KeyPair{}, credentialRecord{}, store.Op{}, fmt.Errorf("encode credential: %w", err)
	}
	name := credentialPrefix(rec.Role, rec.Name) + rec.Serial
	return kp, rec, store.Op{Put: &store.Put{Kind: apiv1.KindCredential, Name: name, Data: data}}, nil
}

// credentials returns role/name's credential records by store name.
func (s *Server) credentials(role, name string) map[string]credentialRecord {
	out := map[string]credentialRecord{}
	for _, o := range s.backend.State().ListPrefix(apiv1.KindCredential, credentialPrefix(role, name)) {
		var rec credentialRecord
		if json.Unmarshal(o.Data, &rec) == nil {
			out[o.Name] = rec
		}
	}
	return out
}

// expired reports whether an RFC 3339 notAfter has passed at now; an
// unreadable one counts as not expired, so it is kept.
func expired(notAfter string, now time.Time) bool {
	t, err := time.Parse(time.RFC3339, notAfter)
	return err == nil && !now.Before(t)
}

// issueCert issues a certificate for a person (POST /v1/certs).
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
	kp, _, put, err := s.sign(pki.CertRequest{
		CommonName:   req.Name,
		Organization: []string{req.Role},
		Usage:        pki.UsageClient,
		Validity:     s.validity,
	}, c.subject())
	if err != nil {
		return nil, err
	}
	ops := append(s.expiredCredentialOps(req.Role, req.Name), put)
	if _, err := s.apply(c.r.Context(), store.Batch{Ops: ops}); err != nil {
		return nil, err
	}
	return apiv1.CertResponse{Cert: string(kp.CertPEM), Key: string(kp.KeyPEM), CA: string(s.ca.CertPEM)}, nil
}

// expiredCredentialOps deletes role/name's records of expired certificates,
// which bounds the records a node renewing every few hours leaves behind.
func (s *Server) expiredCredentialOps(role, name string) []store.Op {
	var ops []store.Op
	now := s.now()
	for storeName, rec := range s.credentials(role, name) {
		if expired(rec.NotAfter, now) {
			ops = append(ops, store.Op{Delete: &store.Delete{Kind: apiv1.KindCredential, Name: storeName}})
		}
	}
	sortOps(ops)
	return ops
}

// nodeIssue is one change to a node's certificates.
type nodeIssue struct {
	id       string
	issuedBy string
	// expect is the NodeIdentity record's ModifyIndex the change is based
	// on (0: the node has none yet).
	expect uint64
	// revoke revokes every earlier unexpired certificate of the node.
	revoke bool
	// extra are ops committed with the change (the token's consumption).
	extra []store.Op
}

// issueNode signs a node certificate valid for the node validity and
// commits, in one raft entry with the call's audit entry: the extra ops,
// the NodeIdentity CAS, the revocations (re-key), the removal of expired
// records and the new credential record. A CAS failure comes back as
// store.ErrConflict or store.ErrNotFound.
func (s *Server) issueNode(c *call, ni nodeIssue) (pki.KeyPair, error) {
	kp, rec, put, err := s.sign(pki.CertRequest{
		CommonName:   ni.id,
		Organization: []string{apiv1.RoleNode},
		Usage:        pki.UsageClient,
		Validity:     s.nodeValidity,
	}, ni.issuedBy)
	if err != nil {
		return pki.KeyPair{}, err
	}
	idData, err := json.Marshal(identityRecord{Serial: rec.Serial, NotAfter: rec.NotAfter, IssuedBy: ni.issuedBy})
	if err != nil {
		return pki.KeyPair{}, fmt.Errorf("encode node identity: %w", err)
	}
	ops := append([]store.Op{}, ni.extra...)
	ops = append(ops, store.Op{Put: &store.Put{Kind: apiv1.KindNodeIdentity, Name: ni.id, Data: idData, ExpectModifyIndex: store.Expect(ni.expect)}})
	if ni.revoke {
		var revs []revocationRecord
		now := s.now()
		for _, cr := range s.credentials(apiv1.RoleNode, ni.id) {
			if !expired(cr.NotAfter, now) {
				revs = append(revs, revocationRecord{Serial: cr.Serial, Role: cr.Role, Name: cr.Name, NotAfter: cr.NotAfter, RevokedBy: ni.issuedBy})
			}
		}
		rops, err := s.revocationOps(revs)
		if err != nil {
			return pki.KeyPair{}, err
		}
		ops = append(ops, rops...)
	}
	ops = append(ops, s.expiredCredentialOps(apiv1.RoleNode, ni.id)...)
	ops = append(ops, put)
	if err := s.applyAuditedOps(c, ops); err != nil {
		return pki.KeyPair{}, err
	}
	return kp, nil
}

// applyAuditedOps commits ops with the call's audit entry (result 200) in
// one log entry; when they fail nothing is committed and finish audits the
// refusal.
func (s *Server) applyAuditedOps(c *call, ops []store.Op) error {
	entry, err := s.auditEntry(c, http.StatusOK, "")
	if err != nil {
		return fmt.Errorf("encode audit entry: %w", err)
	}
	if _, err := s.apply(c.r.Context(), store.Batch{Ops: ops, Audit: &store.AppendAudit{Entry: entry}}); err != nil {
		return err
	}
	c.skipAudit = true
	return nil
}

// renewNodeCert gives a node a fresh certificate for its own id
// (POST /v1/nodes/{id}/renew). Only the node itself may call it: the route
// lets role node in for its own id only, and this refuses every other role
// (cluster-admin included: it makes nodes with join tokens). The caller's
// certificate was checked against the revocations on its handshake and
// again here, after the NodeIdentity index the change is based on was
// read: a re-key committed since then fails the CAS, so a certificate that
// a re-key revoked can never renew itself into a fresh one.
//
// An expired certificate gets here only within the grace (authorize), and
// renews only when it is the node's current certificate, the one its
// NodeIdentity records: revocations of expired certificates are pruned,
// so the record, read with the index the CAS is based on, is what keeps a
// re-keyed node's old certificate, or one already renewed, out.
func (s *Server) renewNodeCert(c *call) (any, error) {
	id := c.r.PathValue("id")
	if c.role() != apiv1.RoleNode || c.subject() != id {
		return nil, forbidden("only node %q itself may renew its certificate", id)
	}
	if err := api.CheckNodeID(id); err != nil {
		return nil, badRequest("node id: %w", err)
	}
	var empty struct{}
	if c.r.ContentLength != 0 {
		if err := decodeStrict(c.r.Body, &empty); err != nil {
			return nil, err
		}
	}
	var (
		expect  uint64
		current identityRecord
	)
	if cur, ok := s.backend.State().Get(apiv1.KindNodeIdentity, id); ok {
		expect = cur.ModifyIndex
		if err := json.Unmarshal(cur.Data, &current); err != nil {
			return nil, fmt.Errorf("decode node identity: %w", err)
		}
	}
	if c.id.Serial == "" || s.Revoked(c.id.Serial) {
		return nil, newError(apiv1.CodeUnauthenticated, "the client certificate is revoked")
	}
	issuedBy := "renew"
	if c.id.Expired {
		if expect == 0 || current.Serial != c.id.Serial {
			return nil, newError(apiv1.CodeUnauthenticated, "the client certificate expired and is not node %q's current certificate (renewed or re-keyed since): re-key the node with a join token", id)
		}
		issuedBy = "renew-expired"
		s.log.Info("renewing an expired node certificate", "node", id, "serial", c.id.Serial, "expired", c.id.NotAfter, "via", c.id.Via)
	}
	live := 0
	for _, cr := range s.credentials(apiv1.RoleNode, id) {
		if !expired(cr.NotAfter, s.now()) {
			live++
		}
	}
	if live >= MaxLiveNodeCerts {
		return nil, newError(apiv1.CodeConflict, "node %q holds %d unexpired certificates, the most allowed: renew once older ones expire, or re-key it", id, live)
	}
	kp, err := s.issueNode(c, nodeIssue{id: id, issuedBy: issuedBy, expect: expect})
	if isCASFailure(err) {
		return nil, newError(apiv1.CodeConflict, "node %q's certificates changed during the renewal: retry", id)
	}
	if err != nil {
		return nil, err
	}
	return apiv1.CertResponse{Cert: string(kp.CertPEM), Key: string(kp.KeyPEM), CA: string(s.ca.CertPEM)}, nil
}
