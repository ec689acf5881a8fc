package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

func nodePath(id, what string) string {
	return apiv1.NodePath(url.PathEscape(id), what)
}

// NodeState returns the NodeStates rendered for node nodeID (one per
// cluster the node belongs to) and the index the answer is at. With index
// > 0 it blocks until they change past index or wait passes (wait 0: the
// server's default), which is how an agent long-polls its state.
func (c *Client) NodeState(ctx context.Context, nodeID string, index uint64, wait time.Duration) ([]api.NodeState, uint64, error) {
	opts := ReadOptions{Index: index, Wait: wait}
	var l apiv1.List
	idx, err := c.call(ctx, request{method: http.MethodGet, path: nodePath(nodeID, "state"), query: opts.query(), extra: opts.extra()}, nil, &l)
	if err != nil {
		return nil, 0, err
	}
	if idx == 0 {
		idx = l.Index
	}
	states := make([]api.NodeState, 0, len(l.Items))
	for _, o := range l.Items {
		var s api.NodeState
		dec := json.NewDecoder(bytes.NewReader(o.Data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, 0, fmt.Errorf("decode node state %s: %w", o.Name, err)
		}
		states = append(states, s)
	}
	return states, idx, nil
}

// PutFacts reports node nodeID's facts and returns the index they are stored at.
func (c *Client) PutFacts(ctx context.Context, nodeID string, facts api.NodeFacts) (uint64, error) {
	var out apiv1.WriteResponse
	if _, err := c.call(ctx, request{method: http.MethodPut, path: nodePath(nodeID, "facts")}, facts, &out); err != nil {
		return 0, err
	}
	return out.Index, nil
}

// Heartbeat tells the leader node nodeID is alive.
func (c *Client) Heartbeat(ctx context.Context, nodeID string) error {
	_, err := c.call(ctx, request{method: http.MethodPost, path: nodePath(nodeID, "heartbeat")}, struct{}{}, nil)
	return err
}

// PutReport reports what node nodeID applied and returns the index it is stored at.
func (c *Client) PutReport(ctx context.Context, nodeID string, report api.NodeReport) (uint64, error) {
	var out apiv1.WriteResponse
	if _, err := c.call(ctx, request{method: http.MethodPut, path: nodePath(nodeID, "report")}, report, &out); err != nil {
		return 0, err
	}
	return out.Index, nil
}

// RenewNodeCert asks for a fresh certificate for node nodeID, which must be
// the caller's own node. The returned certificate and key are checked to
// form a pair.
func (c *Client) RenewNodeCert(ctx context.Context, nodeID string) (apiv1.CertResponse, error) {
	var out apiv1.CertResponse
	if _, err := c.call(ctx, request{method: http.MethodPost, path: nodePath(nodeID, "renew")}, struct{}{}, &out); err != nil {
		return apiv1.CertResponse{}, fmt.Errorf("renew certificate of %s: %w", nodeID, err)
	}
	if _, err := tls.X509KeyPair([]byte(out.Cert), []byte(out.Key)); err != nil {
		return apiv1.CertResponse{}, fmt.Errorf("renew certificate of %s: controller answered an unusable certificate: %w", nodeID, err)
	}
	return out, nil
}

// Join exchanges a one-time join token for node nodeID's certificate. It
// needs no client certificate (cfg.Cert and cfg.Key are ignored) but
// verifies the controllers against cfg.CA. The returned certificate and key
// are checked to form a pair before they are handed back.
func Join(ctx context.Context, cfg Config, token, nodeID string) (apiv1.JoinResponse, error) {
	cfg.Cert, cfg.Key = nil, nil
	c, err := newClient(cfg)
	if err != nil {
		return apiv1.JoinResponse{}, fmt.Errorf("join as %s: %w", nodeID, err)
	}
	defer c.Close()
	var out apiv1.JoinResponse
	in := apiv1.JoinRequest{Token: token, NodeID: nodeID}
	if _, err := c.call(ctx, request{method: http.MethodPost, path: apiv1.PathJoin}, in, &out); err != nil {
		return apiv1.JoinResponse{}, fmt.Errorf("join as %s: %w", nodeID, err)
	}
	if _, err := tls.X509KeyPair([]byte(out.Cert), []byte(out.Key)); err != nil {
		return apiv1.JoinResponse{}, fmt.Errorf("join as %s: controller answered an unusable certificate: %w", nodeID, err)
	}
	return out, nil
}
