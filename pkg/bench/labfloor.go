package bench

import (
	"context"
	"crypto/tls"
	"encoding/json"
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
	"syscall"
	"time"
)

// capture copies every node's /etc/kubernetes (certificates, kubeconfigs)
// to the floor's directory and keeps the etcd and kube-apiserver argv the
// agents ran, with the node root moved to that copy.
func (r *readyBench) capture() error {
	l := r.l
	r.floorUnits = map[string][2][]string{}
	for _, n := range labNodes() {
		us, err := l.units(n.name)
		if err != nil {
			return err
		}
		root := filepath.Join(l.dir, n.name)
		froot := filepath.Join(l.floor, n.name)
		if err := os.RemoveAll(froot); err != nil {
			return fmt.Errorf("capture floor of %s: %w", n.name, err)
		}
		if err := os.CopyFS(filepath.Join(froot, "etc", "kubernetes"), os.DirFS(filepath.Join(root, "etc", "kubernetes"))); err != nil {
			return fmt.Errorf("capture floor of %s: %w", n.name, err)
		}
		var argvs [2][]string
		for i, name := range []string{unitEtcd, unitAPIServer} {
			u, ok := us[name]
			if !ok || len(u.Unit.Argv) == 0 {
				return fmt.Errorf("capture floor of %s: no unit %s", n.name, name)
			}
			argvs[i] = floorArgv(u.Unit.Argv, root, froot)
		}
		r.floorUnits[n.name] = argvs
	}
	return nil
}

// floorArgv is argv with the node root moved to froot and etcd's
// bootstrap state set to new (the floor always starts from empty data).
func floorArgv(argv []string, root, froot string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		a = strings.ReplaceAll(a, root+"/", froot+"/")
		if strings.HasPrefix(a, "--initial-cluster-state=") {
			a = "--initial-cluster-state=new"
		}
		out[i] = a
	}
	return out
}

// floorProc is one hand-started process.
type floorProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// floorOnce runs the floor twice, the two ways a script would start the
// processes: everything at once, and etcd first (kube-apiserver once every
// etcd member answers /health). The run's floor is the faster of the two.
func (r *readyBench) floorOnce(ctx context.Context, run int) error {
	atOnce, err := r.floorStart(ctx, false)
	if err != nil {
		return fmt.Errorf("floor run %d, all at once: %w (logs in %s)", run+1, err, r.l.floor)
	}
	staged, err := r.floorStart(ctx, true)
	if err != nil {
		return fmt.Errorf("floor run %d, etcd first: %w (logs in %s)", run+1, err, r.l.floor)
	}
	best := atOnce
	if slices.Max(staged) < slices.Max(atOnce) {
		best = staged
	}
	r.floorAtOnce = append(r.floorAtOnce, slices.Max(atOnce).Seconds())
	r.floorStaged = append(r.floorStaged, slices.Max(staged).Seconds())
	r.floorAll = append(r.floorAll, slices.Max(best).Seconds())
	r.floorFirst = append(r.floorFirst, slices.Min(best).Seconds())
	r.l.progress(fmt.Sprintf("floor run %d: /readyz on every node after %s all at once (per node %v), %s etcd first (per node %v)", run+1,
		slices.Max(atOnce).Round(10*time.Millisecond), roundAll(atOnce), slices.Max(staged).Round(10*time.Millisecond), roundAll(staged)))
	return nil
}

// floorStart starts every node's etcd and kube-apiserver in the nodes'
// namespaces with empty etcd data (the API servers after every etcd
// member is healthy when staged), returns when /readyz answers on each
// node's address, per node, then stops them and wipes their data.
func (r *readyBench) floorStart(ctx context.Context, staged bool) ([]time.Duration, error) {
	l := r.l
	nodes := labNodes()
	for _, n := range nodes {
		if err := os.RemoveAll(filepath.Join(l.floor, n.name, "var")); err != nil {
			return nil, err
		}
	}
	pki := filepath.Join(l.floor, nodes[0].name, "etc", "kubernetes", "pki")
	client, err := readyzClient(filepath.Join(pki, "ca.crt"), time.Second)
	if err != nil {
		return nil, err
	}
	var procs []*floorProc
	defer func() {
		stopFloor(procs)
		for _, n := range nodes {
			os.RemoveAll(filepath.Join(l.floor, n.name, "var"))
		}
	}()
	start := time.Now()
	for i, unit := range []string{unitEtcd, unitAPIServer} {
		if i == 1 && staged {
			if err := etcdHealthy(ctx, pki); err != nil {
				return nil, err
			}
		}
		for _, n := range nodes {
			p, err := r.startFloor(n.name, unit, r.floorUnits[n.name][i])
			if err != nil {
				return nil, err
			}
			procs = append(procs, p)
		}
	}
	ready := make([]time.Duration, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() {
			errs[i] = pollUntil(ctx, 2*time.Minute, 50*time.Millisecond, "/readyz on "+n.addr, func() error { return readyz(ctx, client, n.addr) })
			ready[i] = time.Since(start)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return ready, nil
}

// etcdHealthy waits until every node's etcd answers /health with
// {"health":"true"} on its client URL, with the API server's etcd client
// certificate from the floor's pki directory.
func etcdHealthy(ctx context.Context, pki string) error {
	c, err := etcdClient(pki)
	if err != nil {
		return err
	}
	for _, n := range labNodes() {
		err := pollUntil(ctx, 2*time.Minute, 50*time.Millisecond, "etcd /health on "+n.addr, func() error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+n.addr+":2379/health", nil)
			if err != nil {
				return err
			}
			resp, err := c.Do(req)
			if err != nil {
				return fmt.Errorf("%w: %w", errNotYet, err)
			}
			defer resp.Body.Close()
			var h struct {
				Health string `json:"health"`
			}
			if err := json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&h); err != nil || h.Health != "true" {
				return fmt.Errorf("%w: etcd %s: %d %q", errNotYet, n.addr, resp.StatusCode, h.Health)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// etcdClient is an HTTPS client with the API server's etcd client
// certificate, trusting the etcd CA.
func etcdClient(pki string) (*http.Client, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "apiserver-etcd-client.crt"), filepath.Join(pki, "apiserver-etcd-client.key"))
	if err != nil {
		return nil, fmt.Errorf("load etcd client certificate: %w", err)
	}
	c, err := readyzClient(filepath.Join(pki, "etcd", "ca.crt"), time.Second)
	if err != nil {
		return nil, err
	}
	c.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{cert}
	return c, nil
}

// startFloor starts argv in node n's network namespace (nsenter, as the
// lab runs its agents), logging to the floor directory.
func (r *readyBench) startFloor(n, unit string, argv []string) (*floorProc, error) {
	l := r.l
	bin := argv[0]
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(l.k8sBin, bin)
	}
	if err := os.MkdirAll(filepath.Join(l.floor, n, "var", "log"), 0o755); err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	logf, err := os.Create(filepath.Join(l.floor, n, "var", "log", unit+".log"))
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command("nsenter", append([]string{"--net=/run/netns/kcore-lab-" + n, bin}, argv[1:]...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("floor: start %s on %s: %w", unit, n, err)
	}
	p := &floorProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stopFloor SIGKILLs every process group and waits for them: the floor's
// processes hold nothing worth a graceful stop, and an API server whose
// etcd went first can take long to drain.
func stopFloor(procs []*floorProc) {
	for _, p := range procs {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	for _, p := range procs {
		<-p.done
	}
}
