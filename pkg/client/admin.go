package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// snapshotTime is how long a snapshot may take to stream, beyond the timeout.
const snapshotTime = 10 * time.Minute

// Health returns the health of the controller the request lands on (the
// preferred one: usually the leader).
func (c *Client) Health(ctx context.Context) (apiv1.Health, error) {
	var h apiv1.Health
	_, err := c.call(ctx, request{method: http.MethodGet, path: apiv1.PathHealth}, nil, &h)
	return h, err
}

// HealthOf returns the health of the controller at addr (host:port), without failover.
func (c *Client) HealthOf(ctx context.Context, addr string) (apiv1.Health, error) {
	hp, err := normalizeAddress(addr)
	if err != nil {
		return apiv1.Health{}, err
	}
	r, err := c.attempt(ctx, hp, request{method: http.MethodGet, path: apiv1.PathHealth})
	if err != nil {
		return apiv1.Health{}, fmt.Errorf("health of %s: %w", hp, err)
	}
	if r.status < 200 || r.status >= 300 {
		return apiv1.Health{}, readError(hp, r)
	}
	defer r.cancel()
	defer func() { _ = r.body.Close() }()
	var h apiv1.Health
	if err := decodeStrict(r.body, &h); err != nil {
		return apiv1.Health{}, fmt.Errorf("health of %s: %w", hp, err)
	}
	return h, nil
}

// CreateToken creates a one-time join token for node nodeID valid for ttl
// (0: the server's default, apiv1.DefaultTokenTTL). A plain token registers
// only a node that is not registered yet; a rekey token re-keys a registered
// node and revokes its earlier certificates.
func (c *Client) CreateToken(ctx context.Context, nodeID string, ttl time.Duration, rekey bool) (apiv1.TokenResponse, error) {
	in := apiv1.TokenRequest{NodeID: nodeID, Rekey: rekey}
	if ttl != 0 {
		in.TTL = ttl.String()
	}
	var out apiv1.TokenResponse
	_, err := c.call(ctx, request{method: http.MethodPost, path: apiv1.PathTokens}, in, &out)
	return out, err
}

// IssueCert asks the controller to issue a certificate for a person with
// role (viewer, operator, cluster-admin) and name (the CommonName).
func (c *Client) IssueCert(ctx context.Context, role, name string) (apiv1.CertResponse, error) {
	var out apiv1.CertResponse
	_, err := c.call(ctx, request{method: http.MethodPost, path: apiv1.PathCerts}, apiv1.CertRequest{Role: role, Name: name}, &out)
	return out, err
}

// RevokeCert revokes the recorded certificate with the hex serial: every
// controller refuses it from then on.
func (c *Client) RevokeCert(ctx context.Context, serial string) (apiv1.RevokeResponse, error) {
	var out apiv1.RevokeResponse
	_, err := c.call(ctx, request{method: http.MethodPost, path: apiv1.PathRevocations}, apiv1.RevokeRequest{Serial: serial}, &out)
	return out, err
}

// Members returns the controller replicas.
func (c *Client) Members(ctx context.Context) ([]apiv1.Member, error) {
	var out []apiv1.Member
	_, err := c.call(ctx, request{method: http.MethodGet, path: apiv1.PathMembers}, nil, &out)
	return out, err
}

// AddMember adds a voting replica.
func (c *Client) AddMember(ctx context.Context, m apiv1.AddMemberRequest) error {
	_, err := c.call(ctx, request{method: http.MethodPost, path: apiv1.PathMembers}, m, nil)
	return err
}

// RemoveMember removes the replica with raft id id. A removal that would
// lose quorum or remove the last voter fails with ErrQuorumLoss.
func (c *Client) RemoveMember(ctx context.Context, id string) error {
	_, err := c.call(ctx, request{method: http.MethodDelete, path: apiv1.PathMembers + "/" + url.PathEscape(id)}, nil, nil)
	return err
}

// SnapshotSave streams a snapshot of the controller state to w and returns
// the number of bytes written.
func (c *Client) SnapshotSave(ctx context.Context, w io.Writer) (int64, error) {
	resp, err := c.send(ctx, request{method: http.MethodGet, path: apiv1.PathSnapshot, extra: snapshotTime})
	if err != nil {
		return 0, err
	}
	defer resp.close()
	n, err := io.Copy(w, resp.body)
	if err != nil {
		return n, fmt.Errorf("save snapshot from %s: %w", resp.addr, err)
	}
	return n, nil
}

// SnapshotRestore replaces the controller state with the snapshot read from
// r. A snapshot from a newer schema fails with ErrSchemaTooNew.
func (c *Client) SnapshotRestore(ctx context.Context, r io.Reader) error {
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r); err != nil {
		return fmt.Errorf("read snapshot: %w", err)
	}
	if buf.Len() == 0 {
		return fmt.Errorf("restore snapshot: the snapshot is empty")
	}
	req := request{method: http.MethodPut, path: apiv1.PathSnapshot, body: buf.Bytes(), contentType: apiv1.ContentTypeSnapshot, extra: snapshotTime}
	resp, err := c.send(ctx, req)
	if err != nil {
		return err
	}
	resp.close()
	return nil
}

// AuditQuery filters GET /v1/audit.
type AuditQuery struct {
	// Since keeps entries at or after this time; zero keeps all.
	Since time.Time
	// Object keeps entries about "kind/name"; empty keeps all.
	Object string
	// Limit keeps at most this many entries, the newest; 0 is the server's default.
	Limit int
	// Stale lets any replica answer from its local state instead of a
	// leader-confirmed read.
	Stale bool
}

// Audit returns audit entries, oldest first.
func (c *Client) Audit(ctx context.Context, q AuditQuery) ([]apiv1.AuditEntry, error) {
	v := url.Values{}
	if !q.Since.IsZero() {
		v.Set(apiv1.ParamSince, q.Since.UTC().Format(time.RFC3339))
	}
	if q.Object != "" {
		v.Set(apiv1.ParamObject, q.Object)
	}
	if q.Limit > 0 {
		v.Set(apiv1.ParamLimit, strconv.Itoa(q.Limit))
	}
	if q.Stale {
		v.Set(apiv1.ParamStale, "true")
	}
	var out []apiv1.AuditEntry
	_, err := c.call(ctx, request{method: http.MethodGet, path: apiv1.PathAudit, query: v}, nil, &out)
	return out, err
}
