package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// join asks the configured members, in turn, to add this replica as a
// voter (POST /v1/members with this replica's own certificate), until one
// accepts or JoinTimeout passes. A refusal (4xx) ends the attempt at once.
func (c *Controller) join(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.JoinTimeout)
	defer cancel()
	body, err := json.Marshal(apiv1.AddMemberRequest{ID: c.node.ID(), RaftAddr: c.node.Addr(), HTTPAddr: c.httpAddr, Schema: c.cfg.schema()})
	if err != nil {
		return fmt.Errorf("join: %w", err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: c.clientTL}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	delay := 200 * time.Millisecond
	var last error
	for {
		for _, addr := range c.cfg.Join {
			err := sendMember(ctx, client, http.MethodPost, apiURL(addr, apiv1.PathMembers), body)
			if err == nil {
				c.log.Info("joined the cluster", "via", addr)
				return nil
			}
			var refused *refusal
			if errors.As(err, &refused) {
				return fmt.Errorf("join via %s: %w", addr, err)
			}
			last = err
			c.log.Warn("join attempt failed; retrying", "via", addr, "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("join: gave up: %w", errors.Join(last, ctx.Err()))
		case <-c.stop:
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// refusal is a 4xx answer: retrying would not help.
type refusal struct{ body apiv1.ErrorBody }

func (r *refusal) Error() string { return r.body.Error() }

// apiURL is path on the API at addr (host:port, http:// or https://).
func apiURL(addr, path string) string {
	base := addr
	if !strings.HasPrefix(base, "https://") {
		base = "https://" + strings.TrimPrefix(base, "http://")
	}
	return strings.TrimSuffix(base, "/") + path
}

// sendMember sends a member request (JSON body) and maps the answer: nil
// for 200, a *refusal for a 4xx other than 409, an apiv1.ErrorBody else.
func sendMember(ctx context.Context, client *http.Client, method, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", apiv1.ContentTypeJSON)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var eb apiv1.ErrorBody
	if json.Unmarshal(b, &eb) != nil {
		eb = apiv1.ErrorBody{Code: apiv1.CodeInternal, Message: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, b)}
	}
	if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusConflict {
		return &refusal{body: eb}
	}
	return &eb
}
