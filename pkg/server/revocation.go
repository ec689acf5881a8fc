package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"sort"
	"strings"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// DefaultMaxRevocations bounds the revocation list: revocations of expired
// certificates are dropped whenever one is added, and a revocation that
// would take the list past the bound is refused.
const DefaultMaxRevocations = 10_000

// ErrRevoked is the handshake error for a revoked client certificate.
var ErrRevoked = errors.New("client certificate is revoked")

// revocationRecord is the data of a KindRevocation, named by the serial.
type revocationRecord struct {
	Serial    string `json:"serial"`
	Role      string `json:"role"`
	Name      string `json:"name"`
	NotAfter  string `json:"notAfter"`
	RevokedBy string `json:"revokedBy"`
}

// serialText is a certificate serial as revocations and credentials name
// it: lowercase hex without leading zeros.
func serialText(n *big.Int) string { return n.Text(16) }

// normalizeSerial reads a hex serial as people copy it (any case, with or
// without colons or a 0x prefix) into serialText's form.
func normalizeSerial(s string) (string, bool) {
	s = strings.TrimPrefix(strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), ":", "")), "0x")
	if s == "" || len(s) > 64 {
		return "", false
	}
	n, ok := new(big.Int).SetString(s, 16)
	if !ok || n.Sign() <= 0 {
		return "", false
	}
	return serialText(n), true
}

// Revoked reports whether the certificate with serial (serialText form) is
// revoked, from this replica's local state.
func (s *Server) Revoked(serial string) bool {
	_, ok := s.backend.State().Get(apiv1.KindRevocation, serial)
	return ok
}

// refuseRevoked answers 401 to a request whose caller's certificate was
// revoked after its connection was set up (a kept-alive connection, or a
// request a follower forwarded), before the route sees it.
func (s *Server) refuseRevoked(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = s.withIdentity(r)
		if id, _ := s.identify(r); id != nil && id.Serial != "" && s.Revoked(id.Serial) {
			writeError(w, newError(apiv1.CodeUnauthenticated, "the client certificate is revoked"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// revocationOps returns the ops that add revs to the list: deletes of the
// revocations whose certificates have expired, then a put per revocation.
// It refuses when the list would grow past the bound.
func (s *Server) revocationOps(revs []revocationRecord) ([]store.Op, error) {
	now := s.now()
	var ops []store.Op
	live := 0
	for _, o := range s.backend.State().List(apiv1.KindRevocation) {
		var rec revocationRecord
		if json.Unmarshal(o.Data, &rec) == nil && expired(rec.NotAfter, now) {
			ops = append(ops, store.Op{Delete: &store.Delete{Kind: apiv1.KindRevocation, Name: o.Name}})
			continue
		}
		live++
	}
	fresh := 0
	for _, r := range revs {
		if !s.Revoked(r.Serial) {
			fresh++
		}
	}
	if live+fresh > s.maxRevocations {
		return nil, newError(apiv1.CodeConflict, "revoke %d certificates: the revocation list holds %d of at most %d unexpired revocations", fresh, live, s.maxRevocations)
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i].Serial < revs[j].Serial })
	for _, r := range revs {
		data, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("encode revocation: %w", err)
		}
		ops = append(ops, store.Op{Put: &store.Put{Kind: apiv1.KindRevocation, Name: r.Serial, Data: data}})
	}
	return ops, nil
}

// sortOps orders ops by store name, so the same state yields the same command.
func sortOps(ops []store.Op) {
	name := func(o store.Op) string {
		if o.Put != nil {
			return o.Put.Name
		}
		return o.Delete.Name
	}
	sort.Slice(ops, func(i, j int) bool { return name(ops[i]) < name(ops[j]) })
}

// revokeCert revokes one recorded certificate by serial (POST
// /v1/revocations, cluster-admin). Only certificates the controller
// recorded can be revoked: their expiry bounds how long the revocation is
// kept. Revoking an expired certificate is a no-op.
func (s *Server) revokeCert(c *call) (any, error) {
	var req apiv1.RevokeRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	serial, ok := normalizeSerial(req.Serial)
	if !ok {
		return nil, badRequest("serial %q: want the certificate's serial number in hex", req.Serial)
	}
	c.object = apiv1.KindRevocation + "/" + serial
	var found *credentialRecord
	for _, o := range s.backend.State().List(apiv1.KindCredential) {
		var rec credentialRecord
		if json.Unmarshal(o.Data, &rec) == nil && rec.Serial == serial {
			found = &rec
			break
		}
	}
	if found == nil {
		return nil, notFound("no issued certificate with serial %s is recorded", serial)
	}
	out := apiv1.RevokeResponse{Serial: serial, Subject: found.Name, Role: found.Role, NotAfter: found.NotAfter}
	if expired(found.NotAfter, s.now()) || s.Revoked(serial) {
		return out, nil
	}
	ops, err := s.revocationOps([]revocationRecord{{Serial: serial, Role: found.Role, Name: found.Name, NotAfter: found.NotAfter, RevokedBy: c.subject()}})
	if err != nil {
		return nil, err
	}
	if err := s.applyAuditedOps(c, ops); err != nil {
		return nil, err
	}
	return out, nil
}
