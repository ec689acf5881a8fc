package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/render"
)

// Releases of the rolling-upgrade test: the lab is created on the older and
// moved to the newer, the release of the cache's current binaries.
const (
	olderRelease = "v1.36.3"
	newerRelease = "v1.37.2"
	updateYAML   = "examples/lab/update-k8s-1-37.yaml"
)

// vrrpBound is how long /readyz through the VIP may fail in a row when its
// holder stops: VRRP's Master_Down_Interval at most (three advertisement
// intervals plus the skew time, under one more), plus 1.6 s for the
// probes' own timeouts and the new holder's first answers.
const vrrpBound = 4*render.VRRPAdvertInterval + 1600*time.Millisecond

// TestRollingUpgrade is the upgrade drill: the cluster is created on
// v1.36.3; a ClusterUpdate to v1.37.2 whose new kube-apiserver is broken on
// one node pauses on that node with the cluster degraded naming it, and a
// rollback returns it; then a real one-at-a-time upgrade of the three
// control planes, approved by hand, survives the controller leader being
// killed mid-rollout, while a probe asks /readyz through the VIP every
// 200 ms and the cluster invariants are sampled (invariants_test.go).
func TestRollingUpgrade(t *testing.T) {
	cache := filepath.Dir(filepath.Dir(gateK8sBin(t)))
	older := filepath.Join(cache, "bin", olderRelease)
	if _, err := os.Stat(filepath.Join(older, "kube-apiserver")); err != nil {
		t.Skipf("SKIP: %s is not built: scripts/build-k8s.sh --k8s-version %s --link %s (make e2e does it)", older, olderRelease, olderRelease)
	}
	l := startLab(t, true, "LAB_K8S_VERSION="+olderRelease, "LAB_WORKLOAD_CHECK=0")
	if err := l.serverVersion(olderRelease); err != nil {
		t.Fatal(err)
	}
	p := l.startProbe(t)
	inv := l.startInvariants(t, labNodes()...)

	t.Run("broken-binary-pauses-and-rolls-back", func(t *testing.T) { testBrokenRelease(t, l) })
	if t.Failed() {
		return
	}
	t.Run("upgrade-with-leader-killed", func(t *testing.T) { testUpgrade(t, l) })

	windows, failed, total := p.stop()
	inv.check(t)
	t.Logf("probe: %d of %d /readyz through the VIP failed; failure windows %v", failed, total, windows)
	for _, w := range windows {
		if w > vrrpBound {
			t.Errorf("/readyz through the VIP failed for %s in a row, longer than the VRRP bound %s", w, vrrpBound)
		}
	}
}

// gateK8sBin is gate's k8sBin (the cache's current binaries).
func gateK8sBin(t *testing.T) string {
	_, bin := gate(t)
	return bin
}

// testBrokenRelease breaks v1.37.2's kube-apiserver on n2 only (the first
// control plane of the order): the step fails, the rollout pauses, the
// cluster is degraded naming lab-n2, and a rollback returns n2 to v1.36.3.
func testBrokenRelease(t *testing.T, l *lab) {
	l.breakRelease(t, "n2", newerRelease)
	l.applyUpdate(t, "broken-1-37")
	if out, err := l.kctl(30*time.Second, "update", "approve", "broken-1-37"); err != nil {
		t.Fatalf("kctl update approve: %v\n%s", err, out)
	}
	l.waitUpdatePhase(t, "broken-1-37", "paused", 6*time.Minute)
	status, _ := l.kctl(30*time.Second, "update", "status", "broken-1-37")
	t.Logf("paused:\n%s", status)
	if !strings.Contains(status, "lab-n2") || !strings.Contains(status, "failed") {
		t.Errorf("update status does not name the failed step on lab-n2:\n%s", status)
	}
	health := l.healthOutput()
	if !strings.Contains(firstLine(health), "degraded") || !strings.Contains(health, "lab-n2") {
		t.Errorf("cluster not degraded naming lab-n2:\n%s", health)
	}
	if out, err := l.kctl(30*time.Second, "update", "rollback", "broken-1-37"); err != nil {
		t.Fatalf("kctl update rollback: %v\n%s", err, out)
	}
	l.waitUpdatePhase(t, "broken-1-37", "failed", 5*time.Minute)
	eventually(t, "cluster ready after the rollback", 3*time.Minute, l.healthy)
	if v, err := l.nodeAPIVersion("n2"); err != nil || v != olderRelease {
		t.Errorf("kube-apiserver on n2 after the rollback: %q, %v; want %s", v, err, olderRelease)
	}
	l.fixRelease(t, "n2", newerRelease)
}

// testUpgrade approves a real upgrade, kills the controller leader while
// the second step runs, and waits for every node on v1.37.2.
func testUpgrade(t *testing.T, l *lab) {
	plan := l.applyUpdate(t, "k8s-1-37")
	t.Logf("plan:\n%s", plan)
	order := regexp.MustCompile(`lab-n2[\s\S]*lab-n3[\s\S]*lab-n1`)
	if !order.MatchString(plan) {
		t.Errorf("the plan does not list the control planes in rollout order n2, n3, n1:\n%s", plan)
	}
	if st, _ := l.kctl(30*time.Second, "update", "status", "k8s-1-37"); !strings.Contains(st, "pending") {
		t.Fatalf("a manual update must wait for approval:\n%s", st)
	}
	start := time.Now()
	if out, err := l.kctl(30*time.Second, "update", "approve", "k8s-1-37"); err != nil {
		t.Fatalf("kctl update approve: %v\n%s", err, out)
	}
	eventually(t, "step 2 running", 5*time.Minute, func() error {
		out, err := l.kctl(30*time.Second, "update", "status", "k8s-1-37")
		if err != nil {
			return err
		}
		if !regexp.MustCompile(`step 2: .*running`).MatchString(out) {
			return fmt.Errorf("step 2 not running:\n%s", out)
		}
		return nil
	})
	old := l.leader(t)
	pid := l.controllerPID(t, old)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill controller %s (pid %d): %v", old, pid, err)
	}
	t.Logf("killed the controller leader %s (pid %d) during step 2, %s after approval", old, pid, time.Since(start).Round(time.Second))
	l.waitUpdatePhase(t, "k8s-1-37", "done", 12*time.Minute)
	t.Logf("rolled out in %s", time.Since(start).Round(time.Second))
	status, _ := l.kctl(30*time.Second, "update", "status", "k8s-1-37")
	t.Logf("done:\n%s", status)
	eventually(t, "cluster ready", 2*time.Minute, l.healthy)
	if err := l.serverVersion(newerRelease); err != nil {
		t.Error(err)
	}
	for _, n := range labNodes() {
		if v, err := l.nodeAPIVersion(n.name); err != nil || v != newerRelease {
			t.Errorf("kube-apiserver on %s: %q, %v; want %s", n.name, v, err, newerRelease)
		}
	}
	eventually(t, "every kubelet on "+newerRelease, time.Minute, func() error {
		out, err := l.kubectl("get", "nodes", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.nodeInfo.kubeletVersion} {end}")
		if err != nil {
			return err
		}
		if strings.Count(out, "="+newerRelease) != len(labNodes()) {
			return fmt.Errorf("kubelets: %s", out)
		}
		return nil
	})
	snaps, err := l.kctl(30*time.Second, "kubernetes", "etcd", "snapshots", cluster)
	if err != nil || !strings.Contains(snaps, "k8s-1-37") {
		t.Errorf("no etcd snapshot taken before the first control plane: %v\n%s", err, snaps)
	}
}

// applyUpdate stores the lab's ClusterUpdate under name and returns the
// plan kctl printed.
func (l *lab) applyUpdate(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(l.repo, updateYAML))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(f, []byte(strings.Replace(string(data), "name: k8s-1-37", "name: "+name, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := l.kctl(2*time.Minute, "apply", "--yes", "-f", f)
	if err != nil {
		t.Fatalf("kctl apply %s: %v\n%s", name, err, out)
	}
	return out
}

// waitUpdatePhase waits until kctl update status shows phase.
func (l *lab) waitUpdatePhase(t *testing.T, name, phase string, timeout time.Duration) {
	t.Helper()
	last := ""
	err := poll(timeout, func() error {
		out, err := l.kctl(30*time.Second, "update", "status", name)
		if err != nil {
			return err
		}
		last = out
		if !regexp.MustCompile(`(?m)^Phase:\s+` + regexp.QuoteMeta(phase) + `\b`).MatchString(out) {
			return fmt.Errorf("not %s yet", phase)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ClusterUpdate %s phase %s: %v\n%s\n%s", name, phase, err, last, l.healthOutput())
	}
}

// breakRelease makes node n's release rel a copy of it whose kube-apiserver
// exits at once.
func (l *lab) breakRelease(t *testing.T, n, rel string) {
	t.Helper()
	dir := filepath.Join(l.dir, n, "releases", rel)
	target, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(target)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "kube-apiserver" {
			continue
		}
		if err := os.Symlink(filepath.Join(target, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	broken := "#!/bin/sh\necho 'kube-apiserver: broken on purpose by TestRollingUpgrade' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "kube-apiserver"), []byte(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("broke %s's %s kube-apiserver (%s)", n, rel, dir)
}

// fixRelease points node n's release rel back at the cache.
func (l *lab) fixRelease(t *testing.T, n, rel string) {
	t.Helper()
	dir := filepath.Join(l.dir, n, "releases", rel)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(l.k8sBin, dir); err != nil {
		t.Fatal(err)
	}
}

// serverVersion checks the server version kubectl reports through the VIP.
func (l *lab) serverVersion(want string) error {
	return poll(time.Minute, func() error {
		out, err := l.kubectl("version", "-o", "json")
		if err != nil {
			return err
		}
		if !strings.Contains(out, `"gitVersion": "`+want+`"`) {
			return fmt.Errorf("kubectl version does not report server %s:\n%s", want, out)
		}
		return nil
	})
}

// nodeAPIVersion is the gitVersion node n's own kube-apiserver reports.
func (l *lab) nodeAPIVersion(n string) (string, error) {
	var addr string
	for _, x := range labNodes() {
		if x.name == n {
			addr = x.addr
		}
	}
	out, err := l.kubectl("--server", "https://"+addr+":"+apiPort, "get", "--raw", "/version")
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`"gitVersion":\s*"([^"]+)"`).FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("no gitVersion in %s", out)
	}
	return m[1], nil
}

// probe asks /readyz through the VIP (or one node's own API server) every
// interval (1 s timeout each) and records the windows of consecutive
// failures.
type probe struct {
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	windows []time.Duration
	// spans are the failure windows with their start and end.
	spans  [][2]time.Time
	failed int
	total  int
}

// startProbe asks /readyz through the VIP every 200 ms.
func (l *lab) startProbe(t *testing.T) *probe {
	return l.startProbeAt(t, vip, 200*time.Millisecond)
}

// startProbeAt asks https://host:apiPort/readyz every interval, trusting
// the CA bundle in n1's ca.crt as it is at each request (read again when
// it changes), as a pod trusting kube-root-ca.crt does through a CA
// rotation.
func (l *lab) startProbeAt(t *testing.T, host string, interval time.Duration) *probe {
	caFile := filepath.Join(l.dir, "n1", "etc", "kubernetes", "pki", "ca.crt")
	var trusted []byte
	var client *http.Client
	// clientNow is the client trusting caFile as it is now; a file that
	// cannot be read or parsed keeps the last one.
	clientNow := func() *http.Client {
		ca, err := os.ReadFile(caFile)
		if err != nil || bytes.Equal(ca, trusted) {
			return client
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return client
		}
		trusted = ca
		client = &http.Client{Timeout: time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true,
		}}
		return client
	}
	if clientNow() == nil {
		t.Fatalf("no CA certificate in the lab's %s", caFile)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &probe{cancel: cancel, done: make(chan struct{})}
	url := "https://" + host + ":" + apiPort + "/readyz"
	go func() {
		defer close(p.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		var since time.Time
		for {
			select {
			case <-ctx.Done():
				if !since.IsZero() {
					p.add(since)
				}
				return
			case <-tick.C:
			}
			ok := false
			if resp, err := clientNow().Get(url); err == nil {
				ok = resp.StatusCode == http.StatusOK
				resp.Body.Close()
			}
			p.mu.Lock()
			p.total++
			if !ok {
				p.failed++
			}
			p.mu.Unlock()
			switch {
			case !ok && since.IsZero():
				since = time.Now()
			case ok && !since.IsZero():
				p.add(since)
				since = time.Time{}
			}
		}
	}()
	t.Cleanup(func() { p.stop() })
	return p
}

func (p *probe) add(since time.Time) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.windows = append(p.windows, now.Sub(since).Round(100*time.Millisecond))
	p.spans = append(p.spans, [2]time.Time{since, now})
}

// stop ends the probe and returns its failure windows and counts.
func (p *probe) stop() ([]time.Duration, int, int) {
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.windows, p.failed, p.total
}
