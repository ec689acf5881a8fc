package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// VIP probe shape: a /readyz through the VIP every probeEvery, each given
// probeTimeout, at most maxProbes per run (30 s).
const (
	probeEvery   = 100 * time.Millisecond
	probeTimeout = 500 * time.Millisecond
	maxProbes    = 300
)

// vrrpParams are what the rendered keepalived.conf says about timing.
type vrrpParams struct {
	// AdvertInt is advert_int in seconds; Priority the instance's priority.
	AdvertInt float64
	Priority  int
	// Interval and Fall are the health script's; zero without a script.
	Interval float64
	Fall     int
}

// masterDown is VRRP's Master_Down_Interval: 3 × advert_int + skew time,
// skew = (256 − priority) × advert_int / 256 (RFC 3768 and 5798): how long
// a backup waits after the last advertisement before it takes the VIP.
func (p vrrpParams) masterDown() float64 {
	return 3*p.AdvertInt + p.skew()
}

// skew is VRRP's Skew_Time, (256 − priority) × advert_int / 256: how long
// a backup waits after a priority-0 advertisement (a master leaving
// gracefully) before it takes the VIP (RFC 5798, 6.4.2).
func (p vrrpParams) skew() float64 {
	return float64(256-p.Priority) * p.AdvertInt / 256
}

// parseKeepalived reads the timing fields of a keepalived.conf kcore rendered.
func parseKeepalived(conf string) (vrrpParams, error) {
	var p vrrpParams
	block := ""
	sc := bufio.NewScanner(strings.NewReader(conf))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if f[0] == "vrrp_script" || f[0] == "vrrp_instance" {
			block = f[0]
			continue
		}
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch {
		case block == "vrrp_instance" && f[0] == "advert_int":
			p.AdvertInt = v
		case block == "vrrp_instance" && f[0] == "priority":
			p.Priority = int(v)
		case block == "vrrp_script" && f[0] == "interval":
			p.Interval = v
		case block == "vrrp_script" && f[0] == "fall":
			p.Fall = int(v)
		}
	}
	if p.AdvertInt == 0 || p.Priority == 0 {
		return p, fmt.Errorf("parse keepalived.conf: no advert_int or priority in vrrp_instance")
	}
	return p, nil
}

// handoverBound is the longest Skew_Time among the nodes' rendered
// configs: how long the VIP has no holder when its holder hands it over
// gracefully (keepalived stopped: a priority-0 advertisement) to the
// slowest backup.
func (l *labEnv) handoverBound() (float64, error) {
	bound := 0.0
	for _, n := range labNodes() {
		p, err := l.keepalivedParams(n.name)
		if err != nil {
			return 0, err
		}
		bound = max(bound, p.skew())
	}
	return bound, nil
}

// vrrpSummary says what the nodes' rendered keepalived.confs set that the
// bounds derive from: "advert_int 0.25, priorities 11-13".
func (l *labEnv) vrrpSummary() (string, error) {
	var adverts []string
	lo, hi := 256, 0
	for _, n := range labNodes() {
		p, err := l.keepalivedParams(n.name)
		if err != nil {
			return "", err
		}
		if a := strconv.FormatFloat(p.AdvertInt, 'f', -1, 64); !slices.Contains(adverts, a) {
			adverts = append(adverts, a)
		}
		lo, hi = min(lo, p.Priority), max(hi, p.Priority)
	}
	return fmt.Sprintf("advert_int %s, priorities %d-%d", strings.Join(adverts, "/"), lo, hi), nil
}

// keepalivedParams reads node n's rendered keepalived.conf.
func (l *labEnv) keepalivedParams(n string) (vrrpParams, error) {
	data, err := os.ReadFile(filepath.Join(l.dir, n, "etc", "keepalived", "keepalived.conf"))
	if err != nil {
		return vrrpParams{}, fmt.Errorf("read keepalived.conf of %s: %w", n, err)
	}
	p, err := parseKeepalived(string(data))
	if err != nil {
		return vrrpParams{}, fmt.Errorf("%s: %w", n, err)
	}
	return p, nil
}

// vipBound is the VRRP bound from a kill on holder: the soonest
// Master_Down_Interval among the other nodes' rendered configs, plus, when
// the health script must first fail (the API server killed), fall × interval.
func (l *labEnv) vipBound(holder string, scriptFails bool) (float64, error) {
	bound := 0.0
	for _, n := range labNodes() {
		if n.name == holder {
			continue
		}
		p, err := l.keepalivedParams(n.name)
		if err != nil {
			return 0, err
		}
		b := p.masterDown()
		if scriptFails {
			b += float64(p.Fall) * p.Interval
		}
		if bound == 0 || b < bound {
			bound = b
		}
	}
	return bound, nil
}

// probe is one /readyz through the VIP.
type probe struct {
	sent, answered time.Time
	ok             bool
}

// vipSample is one kill: when the VIP showed up elsewhere, the first
// /readyz success through the VIP sent after the kill, and the end of the
// last failed stretch (the first success after the last failure).
type vipSample struct {
	move, firstOK, restored time.Duration
	failed, probes          int
	bound                   float64
	from, to                string
}

// summarize finds the first success sent after kill and the first success
// after the last failure (equal to firstOK when nothing failed).
func summarize(probes []probe, kill time.Time) (firstOK, restored time.Duration, failed int, ok bool) {
	lastFail := -1
	for i, p := range probes {
		if p.sent.Before(kill) {
			continue
		}
		if !p.ok {
			failed++
			lastFail = i
			continue
		}
		if !ok {
			firstOK, ok = p.answered.Sub(kill), true
		}
	}
	if !ok {
		return 0, 0, failed, false
	}
	restored = firstOK
	for _, p := range probes[lastFail+1:] {
		if p.ok && !p.sent.Before(kill) {
			restored = p.answered.Sub(kill)
			break
		}
	}
	return firstOK, restored, failed, true
}

// settled waits until one node holds the VIP, every node's keepalived runs
// and every API server answers /readyz, and that holds for 3 s (two
// health-script rises); it returns the holder.
func (l *labEnv) settled(ctx context.Context, c *http.Client) (string, error) {
	var holder string
	var since time.Time
	err := pollUntil(ctx, 3*time.Minute, 200*time.Millisecond, "one VIP holder and every API server ready", func() error {
		h, err := vipHolders(ctx)
		if err != nil {
			return err
		}
		ready := len(h) == 1
		for _, n := range labNodes() {
			if !ready {
				break
			}
			_, kerr := l.unitPID(n.name, unitKeepalived)
			ready = kerr == nil && readyz(ctx, c, n.addr) == nil
		}
		if ready {
			ready = readyz(ctx, c, labVIP) == nil
		}
		if !ready {
			holder = ""
			return errNotYet
		}
		if h[0] != holder {
			holder, since = h[0], time.Now()
			return errNotYet
		}
		if time.Since(since) < 3*time.Second {
			return errNotYet
		}
		return nil
	})
	return holder, err
}

// vipOnce kills unit on the VIP holder and measures the move.
func (l *labEnv) vipOnce(ctx context.Context, c, pc *http.Client, unit string) (vipSample, error) {
	var s vipSample
	holder, err := l.settled(ctx, c)
	if err != nil {
		return s, err
	}
	s.from = holder
	if s.bound, err = l.vipBound(holder, unit == unitAPIServer); err != nil {
		return s, err
	}
	vp := &prober{max: maxProbes}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { vp.run(ctx, pc, labVIP, stop) })
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()
	if _, err := l.killUnit(holder, unit); err != nil {
		return s, err
	}
	kill := time.Now()
	if err := pollUntil(ctx, 30*time.Second, 20*time.Millisecond, "the VIP on another node", func() error {
		h, err := vipHolders(ctx)
		if err != nil {
			return err
		}
		for _, n := range h {
			if n != holder {
				s.move, s.to = time.Since(kill), n
				return nil
			}
		}
		return errNotYet
	}); err != nil {
		return s, err
	}
	moved := kill.Add(s.move)
	if err := pollUntil(ctx, 30*time.Second, 50*time.Millisecond, "/readyz through the VIP after the move", func() error {
		vp.mu.Lock()
		defer vp.mu.Unlock()
		if time.Since(moved) < 2*time.Second {
			return errNotYet
		}
		for _, p := range vp.probes {
			if p.ok && p.sent.After(moved) {
				return nil
			}
		}
		return errNotYet
	}); err != nil {
		return s, err
	}
	close(stop)
	wg.Wait()
	var ok bool
	s.firstOK, s.restored, s.failed, ok = summarize(vp.probes, kill)
	s.probes = len(vp.probes)
	if !ok {
		return s, fmt.Errorf("no /readyz success through the VIP after killing %s on %s", unit, holder)
	}
	return s, nil
}

// probeClients are two /readyz clients trusting the lab cluster's CA: c
// (2 s timeout) for waits, pc (probeTimeout) for the probes.
func (l *labEnv) probeClients() (c, pc *http.Client, err error) {
	ca := filepath.Join(l.dir, labNodes()[0].name, "etc", "kubernetes", "pki", "ca.crt")
	if c, err = readyzClient(ca, 2*time.Second); err != nil {
		return nil, nil, err
	}
	if pc, err = readyzClient(ca, probeTimeout); err != nil {
		return nil, nil, err
	}
	return c, pc, nil
}

// vipFigures are figure 5b: runs kills of keepalived, then of
// kube-apiserver, on the VIP holder of the ready lab cluster.
func vipFigures(ctx context.Context, l *labEnv, runs int, progress func(string)) ([]Figure, error) {
	c, pc, err := l.probeClients()
	if err != nil {
		return nil, err
	}
	summary, err := l.vrrpSummary()
	if err != nil {
		return nil, err
	}
	var out []Figure
	for _, k := range []struct{ unit, what, ref string }{
		{unitKeepalived, "keepalived", "VRRP bound 3 × advert_int + skew"},
		{unitAPIServer, "kube-apiserver only", "health script fall × interval + VRRP bound"},
	} {
		var move, first, restored, bounds []float64
		failed, probes := 0, 0
		for i := range runs {
			s, err := l.vipOnce(ctx, c, pc, k.unit)
			if err != nil {
				return nil, fmt.Errorf("5b, %s killed, run %d: %w", k.what, i+1, err)
			}
			progress(fmt.Sprintf("5b %s killed on %s, run %d: VIP on %s after %s (bound %.2fs); /readyz through the VIP: first success %s, restored %s, %d of %d probes failed",
				k.what, s.from, i+1, s.to, s.move.Round(time.Millisecond), s.bound, s.firstOK.Round(time.Millisecond), s.restored.Round(time.Millisecond), s.failed, s.probes))
			move = append(move, s.move.Seconds())
			first = append(first, s.firstOK.Seconds())
			restored = append(restored, s.restored.Seconds())
			bounds = append(bounds, s.bound)
			failed += s.failed
			probes += s.probes
		}
		bound := slices.Max(bounds)
		f := measured("5b", "VIP move: "+k.what+" SIGKILLed on the holder → VIP on another node", "s", move)
		f = f.withReference(k.ref, bound)
		f = f.withTarget(fmt.Sprintf("<= %.2f s", bound), *f.Value <= bound)
		f = f.withNote("ip -n kcore-lab-nX -o addr polled every 20 ms; bound from the keepalived.conf kcore rendered (" + summary + ")")
		fr := measured("5b", "  "+k.what+" killed: /readyz through the VIP answers again", "s", restored).withNote(fmt.Sprintf(
			"first success after the last failed probe; a probe with a new connection every %s, %s timeout, from the kill until 2 s after the move; %d of %d probes failed; first success after the kill: median %s s",
			probeEvery, probeTimeout, failed, probes, num(Median(first))))
		out = append(out, f, fr)
	}
	return out, nil
}
