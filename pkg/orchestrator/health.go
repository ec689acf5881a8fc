package orchestrator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
)

// DefaultCheckTimeout bounds one health request.
const DefaultCheckTimeout = 2 * time.Second

// CheckResult is the outcome of one health check.
type CheckResult struct {
	// OK is true when the check passed.
	OK bool
	// Message says what was seen and where.
	Message string
}

// Health is the outcome of a cluster's health checks.
type Health struct {
	// API is the /readyz check through the API endpoint.
	API CheckResult
	// Etcd is the quorum of healthy etcd members.
	Etcd CheckResult
}

// Checker runs a cluster's health checks.
type Checker interface {
	// Check checks the cluster c with its secrets s.
	Check(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets) Health
	// EtcdCaughtUp says why control plane node's etcd member of c is not
	// caught up with its cluster yet, "" once it is (a rollout step's gate).
	EtcdCaughtUp(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, node string) string
}

// HTTPChecker checks health over HTTPS: GET https://<apiServerEndpoint>/readyz
// with the cluster CA and the admin certificate, and GET
// https://<control-plane>:2379/health on every control plane with the etcd CA
// and the kube-apiserver etcd client certificate; etcd is healthy when more
// than half of the members are.
type HTTPChecker struct {
	// Timeout bounds each request (default 2s).
	Timeout time.Duration
	// EtcdEndpoint maps a control plane's address to etcd's base URL;
	// nil means https://<address>:2379.
	EtcdEndpoint func(address string) string
}

// Check runs both checks at once (each request is a new TLS handshake
// with a server that may be busy starting: one after another they would
// add up before a cluster's phase can turn ready).
func (h *HTTPChecker) Check(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets) Health {
	var out Health
	var wg sync.WaitGroup
	wg.Go(func() { out.API = h.checkAPI(ctx, c, s) })
	out.Etcd = h.checkEtcd(ctx, c, s)
	wg.Wait()
	return out
}

func (h *HTTPChecker) timeout() time.Duration {
	if h.Timeout > 0 {
		return h.Timeout
	}
	return DefaultCheckTimeout
}

func (h *HTTPChecker) checkAPI(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets) CheckResult {
	url := "https://" + c.Spec.APIServerEndpoint + "/readyz"
	admin, err := adminPair(c, s)
	if err != nil {
		return CheckResult{Message: fmt.Sprintf("GET %s: %v", url, err)}
	}
	client, err := tlsClient(s.ClusterTrust(), admin, h.timeout())
	if err != nil {
		return CheckResult{Message: fmt.Sprintf("GET %s: %v", url, err)}
	}
	defer client.CloseIdleConnections()
	if err := get(ctx, client, url, nil); err != nil {
		return CheckResult{Message: err.Error()}
	}
	return CheckResult{OK: true, Message: "GET " + url + " answered ok"}
}

func (h *HTTPChecker) checkEtcd(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets) CheckResult {
	cps := c.Spec.ControlPlaneNodes
	errs := make([]error, len(cps))
	var wg sync.WaitGroup
	for i, n := range cps {
		url := etcdURL(h.EtcdEndpoint, c, n.AdvertiseAddress) + "/health"
		wg.Go(func() { errs[i] = h.checkMember(ctx, s, n.NodeID, url) })
	}
	wg.Wait()
	var bad []string
	healthy := 0
	for i, n := range cps {
		if errs[i] != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", n.NodeID, errs[i]))
			continue
		}
		healthy++
	}
	quorum := healthy > len(cps)/2
	msg := fmt.Sprintf("%d of %d etcd members healthy", healthy, len(cps))
	if len(bad) > 0 {
		msg += "; " + strings.Join(bad, "; ")
	}
	return CheckResult{OK: quorum, Message: msg}
}

func (h *HTTPChecker) checkMember(ctx context.Context, s *pki.ClusterSecrets, node, url string) error {
	client, err := h.memberClient(s, node)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer client.CloseIdleConnections()
	var body struct {
		Health string `json:"health"`
		Reason string `json:"reason"`
	}
	if err := get(ctx, client, url, &body); err != nil {
		return err
	}
	if body.Health != "true" {
		return fmt.Errorf("GET %s: health %q %s", url, body.Health, body.Reason)
	}
	return nil
}

// memberClient is an HTTPS client of node's etcd member with the API
// server's etcd client certificate.
func (h *HTTPChecker) memberClient(s *pki.ClusterSecrets, node string) (*http.Client, error) {
	cp := s.ControlPlanes[node]
	if cp == nil || len(cp.APIServerEtcdClient.CertPEM) == 0 {
		return nil, fmt.Errorf("no etcd client certificate for %s", node)
	}
	return tlsClient(s.EtcdTrust(), cp.APIServerEtcdClient, h.timeout())
}

// etcdURL is etcd's base URL on a control plane of c, on the client port of
// c's layout.
func etcdURL(endpoint func(string) string, c *api.KubernetesCluster, address string) string {
	if endpoint != nil {
		return endpoint(address)
	}
	return "https://" + net.JoinHostPort(address, strconv.Itoa(render.ClusterLayout(c).EtcdClientPort))
}

// adminPair is the admin client certificate of the first control plane that
// has one.
func adminPair(c *api.KubernetesCluster, s *pki.ClusterSecrets) (pki.KeyPair, error) {
	for _, n := range c.Spec.ControlPlaneNodes {
		if cp := s.ControlPlanes[n.NodeID]; cp != nil && len(cp.Admin.CertPEM) > 0 {
			return cp.Admin, nil
		}
	}
	return pki.KeyPair{}, pki.ErrNoAdmin
}

// tlsClient is an HTTPS client trusting caPEM and presenting cert.
func tlsClient(caPEM []byte, cert pki.KeyPair, timeout time.Duration) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate")
	}
	pair, err := tls.X509KeyPair(cert.CertPEM, cert.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("load client certificate: %w", err)
	}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		},
	}, nil
}

// get does GET url and decodes a JSON body into out (when not nil); any
// status but 200 is an error.
func get(ctx context.Context, client *http.Client, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return do(client, req, out)
}

func do(client *http.Client, req *http.Request, out any) error {
	what := req.Method + " " + req.URL.String()
	resp, err := client.Do(req)
	if err != nil {
		return &unansweredError{what: what, err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: read: %w", what, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", what, resp.Status, strings.TrimSpace(string(body)))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s: decode: %w", what, err)
	}
	return nil
}

// unansweredError means the request got no HTTP answer (dial, TLS or
// timeout), so another endpoint may be tried.
type unansweredError struct {
	what string
	err  error
}

func (e *unansweredError) Error() string { return e.what + ": " + e.err.Error() }

func (e *unansweredError) Unwrap() error { return e.err }
