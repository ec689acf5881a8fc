package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// readyBench is figure 6: kctl kubernetes apply --wait of the lab cluster,
// from the command to phase ready, against the floor: the same etcd and
// kube-apiserver processes (the argv the agents ran, the certificates they
// wrote) started by hand in the same namespaces with empty data dirs.
type readyBench struct {
	l *labEnv
	// floorUnits are per node the etcd and kube-apiserver argv, captured
	// after the first apply and moved to the floor's copy of the files.
	floorUnits map[string][2][]string
	// ours, floorAll and floorFirst are seconds per run; floorAll is the
	// faster of floorAtOnce (every process at once) and floorStaged (etcd
	// first).
	ours, floorAll, floorFirst, floorAtOnce, floorStaged []float64
	// oursAPI is, per run, the seconds from the command to /readyz on
	// every node, probed as the floor is.
	oursAPI []float64
	// steps are, per readySteps event, the seconds from the command to
	// the latest node's event, one per run.
	steps map[string][]float64
	// degraded counts applies whose --wait stopped before ready.
	degraded int
}

// oursOnce times one apply --wait; the first run also captures the argv
// and files the floor reuses.
func (r *readyBench) oursOnce(ctx context.Context, run int) error {
	l := r.l
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	// As scripts/lab.sh: wait for a plan without blocking issues, so the
	// agents' facts no longer show the floor's ports in use.
	if err := pollUntil(ctx, 2*time.Minute, 500*time.Millisecond, "a plan without blocking issues", func() error {
		if _, err := l.kctl(ctx, 30*time.Second, "kubernetes", "plan", "-f", l.manifest()); err != nil {
			return fmt.Errorf("%w: %w", errNotYet, err)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("time to ready: %w", err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(l.o.BinDir, "kctl"), "kubernetes", "apply", "--yes", "--wait", "--timeout", "5m",
		"-f", l.manifest())
	cmd.Env = append(os.Environ(), "KCTL_CONFIG="+filepath.Join(l.dir, "kctl.yaml"))
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var timeline, output []string
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			output = append(output, line)
			if strings.HasPrefix(line, "cluster ") || strings.Contains(line, "): ") {
				timeline = append(timeline, fmt.Sprintf("%6.2fs %s", time.Since(start).Seconds(), strings.TrimSpace(line)))
			}
		}
	})
	api := r.probeAPIs(ctx, start)
	err := cmd.Run()
	pw.Close()
	wg.Wait()
	took := time.Since(start)
	if err != nil && !slices.ContainsFunc(output, func(s string) bool { return strings.Contains(s, "stored, phase") }) {
		return fmt.Errorf("time to ready: kctl kubernetes apply: %w\n%s", err, tail(strings.Join(output, "\n"), 20))
	}
	if err != nil {
		// --wait stops at the first degraded phase; the agents retry, so
		// follow the cluster as scripts/lab.sh does, and count it.
		r.degraded++
		l.progress(fmt.Sprintf("time to ready run %d: apply --wait stopped before ready (%v); following kctl kubernetes health", run+1, err))
		if err := pollUntil(ctx, 5*time.Minute, 500*time.Millisecond, "cluster ready", func() error {
			if _, err := l.kctl(ctx, 30*time.Second, "kubernetes", "health", labCluster); err != nil {
				return fmt.Errorf("%w: %w", errNotYet, err)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("time to ready: %w\n%s", err, strings.Join(timeline, "\n"))
		}
		took = time.Since(start)
	}
	r.ours = append(r.ours, took.Seconds())
	l.progress(fmt.Sprintf("time to ready run %d: apply --wait → ready in %s\n  %s", run+1, took.Round(10*time.Millisecond), strings.Join(timeline, "\n  ")))
	if d, err := api(); err != nil {
		l.progress(fmt.Sprintf("time to ready run %d: /readyz on every node: %v", run+1, err))
	} else {
		r.oursAPI = append(r.oursAPI, d.Seconds())
		l.progress(fmt.Sprintf("time to ready run %d: /readyz on every node after %s", run+1, d.Round(10*time.Millisecond)))
	}
	latest := r.profileRun(start)
	if r.steps == nil {
		r.steps = map[string][]float64{}
	}
	for _, st := range readySteps() {
		if d, ok := latest[st.event]; ok {
			r.steps[st.event] = append(r.steps[st.event], d.Seconds())
		}
	}
	if r.floorUnits == nil {
		return r.capture()
	}
	return nil
}

// figures are figure 6's rows.
func (r *readyBench) figures() []Figure {
	f := measured("6", "time to ready: kctl kubernetes apply --wait → phase ready (3 control planes)", "s", r.ours)
	f = f.withReference("floor: same etcd + kube-apiserver by hand, /readyz on all 3 nodes", Median(r.floorAll))
	f = f.withTarget("ratio <= 1.3", f.Ratio != nil && *f.Ratio <= 1.3)
	f = f.withNote("lab (scripts/lab.sh, LAB_APPLY=0); cluster deleted and etcd data wiped between runs; the floor starts the 3 etcd and 3 kube-apiserver processes with the argv and certificates the agents used, all at once and etcd first, and takes the faster")
	if r.degraded > 0 {
		f = f.withNote(fmt.Sprintf("%d of %d applies stopped degraded and were followed with kctl kubernetes health", r.degraded, len(r.ours)))
	}
	out := []Figure{f,
		measured("6", "  floor: /readyz on all 3 nodes (faster of the two starts)", "s", r.floorAll),
		measured("6", "  floor: /readyz on the first node", "s", r.floorFirst),
		measured("6", "  floor, every process at once", "s", r.floorAtOnce),
		measured("6", "  floor, etcd first, kube-apiserver once etcd is healthy", "s", r.floorStaged)}
	if len(r.oursAPI) > 0 {
		// The part of the apply the floor also does, probed the same way.
		out = append(out, measured("6", "  ours: command → /readyz on all 3 nodes", "s", r.oursAPI).
			withReference("floor, all 3 nodes", Median(r.floorAll)).
			withNote("diagnostic: the floor's probe run during the apply"))
	}
	for _, st := range readySteps() {
		if xs := r.steps[st.event]; len(xs) > 0 {
			name := "  ours: command → " + st.what
			if st.event == proxySettle {
				name = "  ours: " + st.what
			}
			out = append(out, measured("6", name, "s", xs).withNote(
				"diagnostic: from the agents' logs (start unit / run task), the latest of the 3 nodes"))
		}
	}
	return out
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(10 * time.Millisecond)
	}
	return out
}

// probeAPIs probes /readyz on every node from start, as the floor does,
// until each answers or ctx ends; the returned func cancels what is left
// and gives the time the last node answered. The cluster CA is read once
// the agents have written it.
func (r *readyBench) probeAPIs(ctx context.Context, start time.Time) func() (time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	ca := filepath.Join(r.l.dir, labNodes()[0].name, "etc", "kubernetes", "pki", "ca.crt")
	nodes := labNodes()
	ready := make([]time.Duration, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() {
			var c *http.Client
			errs[i] = pollUntil(ctx, 5*time.Minute, 50*time.Millisecond, "/readyz on "+n.addr, func() error {
				if c == nil {
					var err error
					if c, err = readyzClient(ca, time.Second); err != nil {
						return fmt.Errorf("%w: %w", errNotYet, err)
					}
				}
				return readyz(ctx, c, n.addr)
			})
			ready[i] = time.Since(start)
		})
	}
	return func() (time.Duration, error) {
		cancel()
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return 0, err
		}
		return slices.Max(ready), nil
	}
}
