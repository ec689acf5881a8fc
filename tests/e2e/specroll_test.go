package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// Bounds of the extraArgs roll on the lab.
const (
	// specProbeEvery is how often /readyz is asked during the roll.
	specProbeEvery = 100 * time.Millisecond
	// specVIPGap is the longest /readyz through the VIP may fail in a row:
	// the VIP leaves a control plane before its API server restarts.
	specVIPGap = time.Second
	// specRestartSlack is how long after its agent starts the new
	// kube-apiserver a node's own /readyz may begin to fail and still be
	// that restart (the old process stops first, so it is usually before).
	specRestartSlack = 5 * time.Second
	// specRollTimeout bounds the apply --wait of the roll.
	specRollTimeout = 12 * time.Minute
)

// testExtraArgsRoll applies spec.apiServer.extraArgs to the three control
// planes while /readyz is asked through the VIP and on every node's own API
// server every 100 ms: the plan lists the restarts n1, n2, n3; apply --wait
// follows the steps; the VIP never fails for more than a second; no two
// API servers are down at once; the agents restart kube-apiserver once
// each, in the plan's order; every API server runs the new flag.
func testExtraArgsRoll(t *testing.T, l *lab) {
	const flag = "--event-ttl=2h"
	data, err := os.ReadFile(l.manifestFile())
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "cluster.yaml")
	src := strings.TrimRight(string(data), "\n") + "\n  apiServer:\n    extraArgs:\n      event-ttl: 2h\n"
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "cluster ready before the roll", 2*time.Minute, l.healthy)
	inv := l.startInvariants(t, labNodes()...)
	defer inv.check(t)
	viaVIP := l.startProbeAt(t, vip, specProbeEvery)
	own := map[string]*probe{}
	for _, n := range labNodes() {
		own[n.name] = l.startProbeAt(t, n.addr, specProbeEvery)
	}
	start := time.Now()
	out, err := l.kctl(specRollTimeout+time.Minute, "kubernetes", "apply", "-f", f, "--yes", "--wait", "--timeout", specRollTimeout.String())
	t.Logf("kctl kubernetes apply --wait (%s):\n%s", time.Since(start).Round(time.Second), out)
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, l.healthOutput())
	}

	// The plan: kube-apiserver restarts on n1, then n2, then n3.
	var planned []string
	for _, sec := range strings.Split(out, "\n    on ")[1:] {
		node, body, _ := strings.Cut(sec, ":")
		if regexp.MustCompile(`~ kube-apiserver\s+restart`).MatchString(body) {
			planned = append(planned, node)
		}
	}
	if want := []string{"lab-n1", "lab-n2", "lab-n3"}; !slices.Equal(planned, want) {
		t.Errorf("the plan lists kube-apiserver restarts on %v, want %v", planned, want)
	}
	for i, n := range []string{"lab-n1", "lab-n2", "lab-n3"} {
		if step := fmt.Sprintf("step %d of 3 (control-plane %s)", i+1, n); !strings.Contains(out, step) {
			t.Errorf("apply --wait did not show %q", step)
		}
	}

	windows, failed, total := viaVIP.stop()
	t.Logf("/readyz through the VIP: %d of %d failed; failure windows %v", failed, total, windows)
	for _, w := range windows {
		if w > specVIPGap {
			t.Errorf("/readyz through the VIP failed for %s in a row, longer than %s", w, specVIPGap)
		}
	}
	// Each node's restart is the own-probe failure span around the time its
	// agent started the new kube-apiserver; a slow answer at another time
	// (a loaded machine) is not a restart. No two restarts overlap, and
	// each begins after the previous node's API server answered again.
	type restart struct {
		node     string
		at       time.Time
		from, to time.Time
	}
	var restarts []restart
	for _, n := range labNodes() {
		_, _, _ = own[n.name].stop()
		spans := own[n.name].spans
		t.Logf("%s's own /readyz failure spans: %s", n.name, formatSpans(spans))
		times := l.unitStarts(t, n.name, "kcore-kube-apiserver", start)
		if len(times) != 1 {
			t.Errorf("%s's agent started kube-apiserver %d times during the roll, want once", n.name, len(times))
			continue
		}
		i := slices.IndexFunc(spans, func(sp [2]time.Time) bool { return !sp[1].Before(times[0]) })
		if i < 0 || spans[i][0].After(times[0].Add(specRestartSlack)) {
			t.Errorf("%s's own /readyz never failed around its kube-apiserver start at %s: it did not restart", n.name, times[0].Format("15:04:05.000"))
			continue
		}
		restarts = append(restarts, restart{n.name, times[0], spans[i][0], spans[i][1]})
	}
	var order []string
	for i, r := range restarts {
		order = append(order, r.node+"@"+r.at.Format("15:04:05.000"))
		if i == 0 {
			continue
		}
		if prev := restarts[i-1]; !r.from.After(prev.to) {
			t.Errorf("kube-apiserver down on %s from %s, before %s's answered again at %s", r.node, r.from.Format("15:04:05.000"), prev.node, prev.to.Format("15:04:05.000"))
		}
	}
	t.Logf("kube-apiserver restarts: %v", order)
	for _, n := range labNodes() {
		pid, err := l.unitPID(n.name, "kcore-kube-apiserver")
		if err != nil {
			t.Error(err)
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !slices.Contains(strings.Split(string(cmdline), "\x00"), flag) {
			t.Errorf("kube-apiserver on %s runs without %s: %v", n.name, flag, err)
		}
	}
	if get, err := l.kctl(30*time.Second, "kubernetes", "get", cluster); err != nil || !regexp.MustCompile(`Spec rollout:\s+generation \d+ done`).MatchString(get) {
		t.Errorf("kctl kubernetes get does not show the spec rollout done: %v\n%s", err, get)
	}
}

// unitStarts are the times node n's agent logged starting unit since from.
func (l *lab) unitStarts(t *testing.T, n, unit string, from time.Time) []time.Time {
	t.Helper()
	fh, err := os.Open(filepath.Join(l.dir, "log", "agent-"+n+".log"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	re := regexp.MustCompile(`^time=(\S+) .*msg="started unit".* unit=` + regexp.QuoteMeta(unit) + `( |$)`)
	var out []time.Time
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err == nil && !at.Before(from) {
			out = append(out, at)
		}
	}
	return out
}

// formatSpans prints failure spans as from–to times.
func formatSpans(spans [][2]time.Time) string {
	var out []string
	for _, sp := range spans {
		out = append(out, sp[0].Format("15:04:05.0")+"–"+sp[1].Format("15:04:05.0"))
	}
	return "[" + strings.Join(out, " ") + "]"
}
