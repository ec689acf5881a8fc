package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Client bounds: each check, and the body a GET reads.
const (
	checkTimeout = 5 * time.Second
	maxBodyBytes = 64 << 10
)

// check is one client check: GET a URL and expect a substring in the body,
// or resolve a name. Go's own resolver does the lookups, so the check needs
// nothing from the image but this binary.
type check struct {
	url, expect string
	lookup      string
}

// parseGet reads "URL=SUBSTRING" (or a bare URL).
func parseGet(v string) (check, error) {
	u, expect, _ := strings.Cut(v, "=")
	if !strings.HasPrefix(u, "http://") {
		return check{}, fmt.Errorf("-get %q: want http://HOST[:PORT]/PATH[=SUBSTRING]", v)
	}
	return check{url: u, expect: expect}, nil
}

// runChecks runs every check in order, printing what each saw, and fails at
// the first that does not pass.
func runChecks(ctx context.Context, checks []check, out io.Writer) error {
	client := &http.Client{Timeout: checkTimeout}
	for _, c := range checks {
		if c.lookup != "" {
			lctx, cancel := context.WithTimeout(ctx, checkTimeout)
			addrs, err := net.DefaultResolver.LookupHost(lctx, c.lookup)
			cancel()
			if err != nil {
				return fmt.Errorf("lookup %s: %w", c.lookup, err)
			}
			fmt.Fprintf(out, "lookup %s: %s\n", c.lookup, strings.Join(addrs, " "))
			continue
		}
		body, err := get(ctx, client, c.url)
		if err != nil {
			return err
		}
		if !strings.Contains(body, c.expect) {
			return fmt.Errorf("get %s: body %q lacks %q", c.url, body, c.expect)
		}
		fmt.Fprintf(out, "get %s: %s\n", c.url, strings.ReplaceAll(strings.TrimSpace(body), "\n", "; "))
	}
	return nil
}

func get(ctx context.Context, client *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("get %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return "", fmt.Errorf("get %s: read body: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("get %s: %s", url, resp.Status)
	}
	return string(data), nil
}
