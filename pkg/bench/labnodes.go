package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// Unit names the lab's agents run (render's).
const (
	unitEtcd       = render.UnitEtcd
	unitAPIServer  = render.UnitAPIServer
	unitKeepalived = render.UnitKeepalived
)

// errNotYet is what a poll condition returns while it waits.
var errNotYet = errors.New("not yet")

// supervisorUnit is one unit of a node's supervisor state file.
type supervisorUnit struct {
	Unit  api.Unit `json:"unit"`
	State string   `json:"state"`
	PID   int      `json:"pid"`
}

// units reads node n's supervisor state (<root>/var/lib/kcore/supervisor.json).
func (l *labEnv) units(n string) (map[string]supervisorUnit, error) {
	var s struct {
		Units map[string]supervisorUnit `json:"units"`
	}
	data, err := os.ReadFile(filepath.Join(l.dir, n, "var", "lib", "kcore", "supervisor.json"))
	if err != nil {
		return nil, fmt.Errorf("read supervisor state of %s: %w", n, err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("decode supervisor state of %s: %w", n, err)
	}
	return s.Units, nil
}

// unitPID is the pid of a running unit on node n.
func (l *labEnv) unitPID(n, unit string) (int, error) {
	us, err := l.units(n)
	if err != nil {
		return 0, err
	}
	u, ok := us[unit]
	if !ok || u.PID == 0 || u.State != "running" {
		return 0, fmt.Errorf("unit %s not running on %s: %w", unit, n, errNotYet)
	}
	return u.PID, nil
}

// killUnit SIGKILLs a unit's process group on node n and returns its pid.
func (l *labEnv) killUnit(n, unit string) (int, error) {
	pid, err := l.unitPID(n, unit)
	if err != nil {
		return 0, err
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("kill %s (pid %d) on %s: %w", unit, pid, n, err)
	}
	return pid, nil
}

// vipHolders are the nodes whose eth0 holds the VIP (ip -n NS -o addr).
func vipHolders(ctx context.Context) ([]string, error) {
	var out []string
	for _, n := range labNodes() {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		b, err := exec.CommandContext(cctx, "ip", "-n", "kcore-lab-"+n.name, "-o", "addr", "show", "dev", "eth0").Output()
		cancel()
		if err != nil {
			return nil, fmt.Errorf("list addresses of %s: %w", n.name, err)
		}
		if strings.Contains(string(b), " "+labVIP+"/") {
			out = append(out, n.name)
		}
	}
	return out, nil
}

// pollUntil calls cond every interval until it returns nil, returns an
// error other than errNotYet, or timeout passes.
func pollUntil(ctx context.Context, timeout, interval time.Duration, what string, cond func() error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		last = cond()
		if last == nil {
			return nil
		}
		if !errors.Is(last, errNotYet) {
			return fmt.Errorf("wait for %s: %w", what, last)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for %s: gave up after %s: %w", what, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// readyzClient returns an HTTPS client that trusts the cluster CA in
// caFile, opens a new connection for every request (so each probe sees
// where the VIP is now) and gives up after timeout.
func readyzClient(caFile string, timeout time.Duration) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("read cluster ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("read cluster ca %s: no certificate", caFile)
	}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			DisableKeepAlives: true,
			Proxy:             nil,
		},
	}, nil
}

// readyz is nil when GET https://addr:6444/readyz answers 200 "ok".
func readyz(ctx context.Context, c *http.Client, addr string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+":"+labAPIPort+"/readyz", nil)
	if err != nil {
		return fmt.Errorf("readyz %s: %w", addr, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("readyz %s: %w: %w", addr, errNotYet, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		return fmt.Errorf("readyz %s: %w: %d %q", addr, errNotYet, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}
