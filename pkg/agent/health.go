package agent

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// ProbeInterval is how often one HealthURL is probed at most: an answer
// younger than this is reused. The apply's wait loops ask every 20 ms
// while a dependency comes up; every probe that reached the server took CPU
// from the very process being waited for.
const ProbeInterval = 100 * time.Millisecond

// ProbeTimeout bounds one probe.
const ProbeTimeout = 3 * time.Second

// Prober probes units' HealthURLs: GET, success on a 2xx answer. The
// certificate of a loopback address is not verified (a local API server's
// /readyz is checked before the agent holds its CA); any other is.
// Connections are kept alive between probes, so a unit waited for is not
// handed a TLS handshake every few milliseconds, and an answer is reused
// for ProbeInterval. The zero value is ready to use.
type Prober struct {
	once     sync.Once
	verify   *http.Client
	insecure *http.Client

	mu   sync.Mutex
	last map[string]probeResult
	now  func() time.Time // nil: time.Now
}

// probeResult is one URL's last answer.
type probeResult struct {
	at  time.Time
	err error
}

func (p *Prober) init() {
	p.once.Do(func() {
		p.verify = probeClient(false)
		p.insecure = probeClient(true)
	})
}

// probeClient is a client whose connections stay open between probes (one
// per host: probes of one URL never overlap for long).
func probeClient(insecure bool) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12},
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     30 * time.Second,
		TLSHandshakeTimeout: ProbeTimeout,
	}}
}

func (p *Prober) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// Probe answers whether rawURL is healthy, from an answer younger than
// ProbeInterval when there is one.
func (p *Prober) Probe(ctx context.Context, rawURL string) error {
	p.mu.Lock()
	if r, ok := p.last[rawURL]; ok && p.clock().Sub(r.at) < ProbeInterval {
		p.mu.Unlock()
		return r.err
	}
	p.mu.Unlock()
	err := p.get(ctx, rawURL)
	if ctx.Err() != nil {
		return err // not the unit's answer: not kept
	}
	p.mu.Lock()
	now := p.clock()
	for u, r := range p.last {
		if now.Sub(r.at) >= ProbeInterval {
			delete(p.last, u) // too old to reuse: only the URLs of the last interval are kept
		}
	}
	if p.last == nil {
		p.last = map[string]probeResult{}
	}
	p.last[rawURL] = probeResult{at: now, err: err}
	p.mu.Unlock()
	return err
}

// get makes one probe.
func (p *Prober) get(ctx context.Context, rawURL string) error {
	p.init()
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("probe %s: %w", rawURL, err)
	}
	ip := net.ParseIP(u.Hostname())
	client := p.verify
	if u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback()) {
		client = p.insecure
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fmt.Errorf("probe %s: %w", rawURL, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("probe %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	// Drained (a health answer is short), the connection is reused.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("probe %s: status %d", rawURL, resp.StatusCode)
	}
	return nil
}
