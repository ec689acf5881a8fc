package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// EtcdMember is one member of a cluster's etcd.
type EtcdMember struct {
	// ID is etcd's member id.
	ID uint64
	// Name is the member's name (the node id; empty until a learner starts).
	Name string
	// PeerURLs are the member's peer URLs.
	PeerURLs []string
	// IsLearner is true until the member is promoted.
	IsLearner bool
}

// EtcdMembership changes a cluster's etcd membership.
type EtcdMembership interface {
	// Members lists the members.
	Members(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets) ([]EtcdMember, error)
	// AddLearner adds a non-voting member with peerURL.
	AddLearner(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, peerURL string) (EtcdMember, error)
	// Promote makes a caught-up learner a voting member.
	Promote(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, id uint64) error
	// Remove removes a member.
	Remove(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, id uint64) error
}

// ErrNoEtcd means no control plane's etcd answered.
var ErrNoEtcd = errors.New("no etcd endpoint answered")

// HTTPEtcd changes membership through etcd's v3 JSON gateway
// (POST /v3/cluster/member/{list,add,promote,remove}) over HTTPS with the
// etcd CA and the kube-apiserver etcd client certificate, trying each
// control plane of the spec in turn until one answers.
type HTTPEtcd struct {
	// Timeout bounds each request (default 2s).
	Timeout time.Duration
	// EtcdEndpoint maps a control plane's address to etcd's base URL;
	// nil means https://<address>:2379.
	EtcdEndpoint func(address string) string
}

// memberID is an etcd member id; the gateway writes uint64 as a string.
type memberID uint64

func (m *memberID) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("decode member id %s: %w", b, err)
	}
	*m = memberID(v)
	return nil
}

func (m memberID) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatUint(uint64(m), 10) + `"`), nil
}

type gatewayMember struct {
	ID        memberID `json:"ID"`
	Name      string   `json:"name"`
	PeerURLs  []string `json:"peerURLs"`
	IsLearner bool     `json:"isLearner"`
}

func (g gatewayMember) member() EtcdMember {
	return EtcdMember{ID: uint64(g.ID), Name: g.Name, PeerURLs: g.PeerURLs, IsLearner: g.IsLearner}
}

// Members lists the members.
func (e *HTTPEtcd) Members(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets) ([]EtcdMember, error) {
	var out struct {
		Members []gatewayMember `json:"members"`
	}
	if err := e.post(ctx, c, s, "/v3/cluster/member/list", struct{}{}, &out); err != nil {
		return nil, fmt.Errorf("list etcd members: %w", err)
	}
	ms := make([]EtcdMember, 0, len(out.Members))
	for _, m := range out.Members {
		ms = append(ms, m.member())
	}
	return ms, nil
}

// AddLearner adds a learner with peerURL.
func (e *HTTPEtcd) AddLearner(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, peerURL string) (EtcdMember, error) {
	in := struct {
		PeerURLs  []string `json:"peerURLs"`
		IsLearner bool     `json:"isLearner"`
	}{[]string{peerURL}, true}
	var out struct {
		Member gatewayMember `json:"member"`
	}
	if err := e.post(ctx, c, s, "/v3/cluster/member/add", in, &out); err != nil {
		return EtcdMember{}, fmt.Errorf("add etcd learner %s: %w", peerURL, err)
	}
	return out.Member.member(), nil
}

// Promote promotes learner id.
func (e *HTTPEtcd) Promote(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, id uint64) error {
	in := struct {
		ID memberID `json:"ID"`
	}{memberID(id)}
	if err := e.post(ctx, c, s, "/v3/cluster/member/promote", in, nil); err != nil {
		return fmt.Errorf("promote etcd member %x: %w", id, err)
	}
	return nil
}

// Remove removes member id.
func (e *HTTPEtcd) Remove(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, id uint64) error {
	in := struct {
		ID memberID `json:"ID"`
	}{memberID(id)}
	if err := e.post(ctx, c, s, "/v3/cluster/member/remove", in, nil); err != nil {
		return fmt.Errorf("remove etcd member %x: %w", id, err)
	}
	return nil
}

// post sends in to path on the first control plane that answers. A request
// etcd answered with an error is not retried elsewhere.
func (e *HTTPEtcd) post(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	var errs []error
	for _, n := range c.Spec.ControlPlaneNodes {
		cp := s.ControlPlanes[n.NodeID]
		if cp == nil || len(cp.APIServerEtcdClient.CertPEM) == 0 {
			continue
		}
		client, err := tlsClient(s.EtcdTrust(), cp.APIServerEtcdClient, timeout)
		if err != nil {
			return err
		}
		url := etcdURL(e.EtcdEndpoint, c, n.AdvertiseAddress) + path
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("POST %s: %w", url, err)
		}
		req.Header.Set("Content-Type", "application/json")
		err = do(client, req, out)
		client.CloseIdleConnections()
		var unanswered *unansweredError
		if errors.As(err, &unanswered) {
			errs = append(errs, err)
			continue
		}
		return err
	}
	return fmt.Errorf("%s: %w: %w", path, ErrNoEtcd, errors.Join(errs...))
}
