package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
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
	// requestID is the write's apiv1.HeaderRequestID, set by send once per
	// logical call and sent unchanged on every retry of it.
	requestID string
	// once says the controller applies this route at most once per request
	// id (object writes, update actions), so the write is also sent again after a
	// connection broke mid-request, when its outcome is unknown.
	once bool
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
	req, err := withRequestID(req)
	if err != nil {
		return nil, err
	}
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
			if !retryable(req, err) {
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
	if req.requestID != "" {
		hreq.Header.Set(apiv1.HeaderRequestID, req.requestID)
	}
	hresp, err := c.http.Do(hreq)
	if err != nil {
		cancel()
		return nil, err
	}
	return &rawResponse{status: hresp.StatusCode, header: hresp.Header, body: hresp.Body, cancel: cancel}, nil
}

// retryable reports whether a transport error allows trying another
// controller: always when the request cannot have been sent (no
// connection, failed handshake), and for reads and writes the controller
// applies at most once per request id also when it broke later.
func retryable(req request, err error) bool {
	if readOnly(req.method) || (req.once && req.requestID != "") {
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
	req, err := withRequestID(req)
	if err != nil {
		return 0, err
	}
	for sent := 1; ; sent++ {
		idx, err := c.callOnce(ctx, req, out)
		if err == nil || !req.once || sent == maxBodyResends || !errors.Is(err, errBodyBroken) || ctx.Err() != nil {
			return idx, err
		}
		c.log.Debug("answer broke off, sending the write again", "method", req.method, "path", req.path, "err", err)
	}
}

// maxBodyResends bounds how often call sends a write the controller
// applies at most once when its 2xx answer keeps breaking off.
const maxBodyResends = 3

// errBodyBroken marks a 2xx answer whose body broke off.
var errBodyBroken = errors.New("answer broke off")

// callOnce sends req once (with send's failover) and decodes the answer.
func (c *Client) callOnce(ctx context.Context, req request, out any) (uint64, error) {
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
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, new(net.Error)) {
			err = fmt.Errorf("%w: %w", errBodyBroken, err)
		}
		return 0, fmt.Errorf("%s %s on %s: %w", req.method, req.path, resp.addr, err)
	}
	return resp.index(), nil
}

// withRequestID gives a write its request id, once per logical call.
func withRequestID(req request) (request, error) {
	if readOnly(req.method) || req.requestID != "" {
		return req, nil
	}
	id, err := newRequestID()
	if err != nil {
		return req, fmt.Errorf("%s %s: %w", req.method, req.path, err)
	}
	req.requestID = id
	return req, nil
}

// readOnly reports whether method changes nothing.
func readOnly(method string) bool {
	return method == http.MethodGet || method == http.MethodHead
}

// newRequestID returns a random 128-bit request id, hex-encoded.
func newRequestID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("draw request id: %w", err)
	}
	return hex.EncodeToString(b), nil
}
