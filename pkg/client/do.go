package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// Response size limits.
const (
	maxJSONResponse  = 64 << 20
	maxErrorResponse = 1 << 20
)

// request is one API call, independent of the controller it goes to; body is
// kept as bytes so the call can be sent again to another controller.
type request struct {
	method      string
	path        string // escaped
	query       url.Values
	body        []byte
	contentType string
	// extra is added to the client's timeout: a blocking query's wait, or
	// the time a snapshot may take to stream.
	extra time.Duration
}

// response is a 2xx answer; close releases it.
type response struct {
	addr   string
	header http.Header
	body   io.ReadCloser
	cancel context.CancelFunc
}

func (r *response) close() {
	_ = r.body.Close()
	r.cancel()
}

// index returns the X-Kcore-Index header, 0 when absent or malformed.
func (r *response) index() uint64 {
	n, err := strconv.ParseUint(r.header.Get(apiv1.HeaderIndex), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// order returns the addresses to try: the preferred one first.
func (c *Client) order() []string {
	c.mu.Lock()
	pref := c.preferred
	c.mu.Unlock()
	out := make([]string, 0, len(c.addrs)+1)
	if pref != "" {
		out = append(out, pref)
	}
	for _, a := range c.addrs {
		if a != pref {
			out = append(out, a)
		}
	}
	return out
}

func (c *Client) setPreferred(addr string) {
	c.mu.Lock()
	c.preferred = addr
	c.mu.Unlock()
}

// send delivers req to a controller that can answer it and returns the 2xx
// response. It fails over as the package documentation describes.
func (c *Client) send(ctx context.Context, req request) (*response, error) {
	electionEnd := time.Now().Add(c.electionWait)
	backoff := 50 * time.Millisecond
	for {
		resp, noLeader, err := c.round(ctx, req)
		if err == nil {
			return resp, nil
		}
		if !noLeader || time.Now().After(electionEnd) {
			return nil, err
		}
		c.log.Debug("no leader yet, retrying", "method", req.method, "path", req.path, "backoff", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%s %s: %w (last: %w)", req.method, req.path, ctx.Err(), err)
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// round tries every address once, following leader hints. noLeader is true
// when the failure was that no controller knew a leader, which is worth
// waiting out.
func (c *Client) round(ctx context.Context, req request) (resp *response, noLeader bool, err error) {
	queue := c.order()
	tried := map[string]bool{}
	var lastErr error
	for len(queue) > 0 {
		addr := queue[0]
		queue = queue[1:]
		if tried[addr] {
			continue
		}
		tried[addr] = true
		resp, err := c.attempt(ctx, addr, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, fmt.Errorf("%s %s: %w", req.method, req.path, ctx.Err())
			}
			if !retryable(req.method, err) {
				return nil, false, fmt.Errorf("%s %s on %s: %w", req.method, req.path, addr, err)
			}
			c.log.Debug("controller unreachable, trying the next", "addr", addr, "err", err)
			lastErr = err
			continue
		}
		if resp.status >= 200 && resp.status < 300 {
			c.setPreferred(addr)
			return &response{addr: addr, header: resp.header, body: resp.body, cancel: resp.cancel}, false, nil
		}
		apiErr := readError(addr, resp)
		if apiErr.Code != apiv1.CodeNoLeader {
			c.setPreferred(addr)
			return nil, false, apiErr
		}
		noLeader = true
		lastErr = apiErr
		if hint, err := normalizeAddress(apiErr.Details[apiv1.DetailLeader]); err == nil && !tried[hint] {
			c.log.Debug("following the leader", "from", addr, "leader", hint)
			queue = append([]string{hint}, queue...)
		}
	}
	var apiErr *APIError
	if errors.As(lastErr, &apiErr) {
		return nil, noLeader, apiErr
	}
	return nil, noLeader, fmt.Errorf("%s %s: %w: %w", req.method, req.path, ErrUnreachable, lastErr)
}

// rawResponse is any HTTP answer from one attempt.
type rawResponse struct {
	status int
	header http.Header
	body   io.ReadCloser
	cancel context.CancelFunc
}

func (c *Client) attempt(ctx context.Context, addr string, req request) (*rawResponse, error) {
	u := &url.URL{Scheme: "https", Host: addr, RawPath: req.path, RawQuery: req.query.Encode()}
	p, err := url.PathUnescape(req.path)
	if err != nil {
		return nil, fmt.Errorf("build request path %q: %w", req.path, err)
	}
	u.Path = p
	actx, cancel := context.WithTimeout(ctx, c.timeout+req.extra)
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hreq, err := http.NewRequestWithContext(actx, req.method, u.String(), body)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("build request: %w", err)
	}
	if req.body != nil {
		ct := req.contentType
		if ct == "" {
			ct = apiv1.ContentTypeJSON
		}
		hreq.Header.Set("Content-Type", ct)
	}
	hreq.Header.Set("Accept", apiv1.ContentTypeJSON)
	hresp, err := c.http.Do(hreq)
	if err != nil {
		cancel()
		return nil, err
	}
	return &rawResponse{status: hresp.StatusCode, header: hresp.Header, body: hresp.Body, cancel: cancel}, nil
}

// retryable reports whether a transport error allows trying another
// controller: always when the request cannot have been sent (no
// connection, failed handshake), and for reads also when it broke later.
func retryable(method string, err error) bool {
	if method == http.MethodGet || method == http.MethodHead {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var cve *tls.CertificateVerificationError
	var rhe tls.RecordHeaderError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &cve) || errors.As(err, &rhe)
}

// readError turns a non-2xx answer into an *APIError and releases it.
func readError(addr string, r *rawResponse) *APIError {
	defer r.cancel()
	defer func() { _ = r.body.Close() }()
	data, _ := io.ReadAll(io.LimitReader(r.body, maxErrorResponse))
	e := &APIError{Status: r.status, Addr: addr}
	var body apiv1.ErrorBody
	if err := json.Unmarshal(data, &body); err == nil && body.Code != "" {
		e.Code, e.Message, e.Details = body.Code, body.Message, body.Details
		return e
	}
	e.Code = codeForStatus(r.status)
	e.Message = strings.TrimSpace(string(data))
	return e
}

// decodeStrict decodes one JSON value from r into out, refusing unknown
// fields and trailing data.
func decodeStrict(r io.Reader, out any) error {
	dec := json.NewDecoder(io.LimitReader(r, maxJSONResponse))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("decode response: trailing data after the JSON value")
	}
	return nil
}

// call sends req with in (JSON-encoded unless nil) and decodes a JSON answer
// into out (unless nil). It returns the X-Kcore-Index header.
func (c *Client) call(ctx context.Context, req request, in, out any) (uint64, error) {
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("%s %s: encode body: %w", req.method, req.path, err)
		}
		req.body = data
	}
	resp, err := c.send(ctx, req)
	if err != nil {
		return 0, err
	}
	defer resp.close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.body, maxJSONResponse))
		return resp.index(), nil
	}
	if err := decodeStrict(resp.body, out); err != nil {
		return 0, fmt.Errorf("%s %s on %s: %w", req.method, req.path, resp.addr, err)
	}
	return resp.index(), nil
}
