package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"kcore.dev/kcore/manifests"
)

// Figure 5c: a LoadBalancer address Cilium announces over ARP answering
// again after the node announcing it loses power, on the Cilium cluster of
// examples/lab/cilium.yaml (scripts/lab.sh machine-up c1 c2 c3).
const (
	ciliumManifestFile = "examples/lab/cilium.yaml"
	ciliumClusterName  = "lab-cilium"
	// l2Namespace holds the figure's echo pods and Service.
	l2Namespace = "kcore-bench-l2"
	// l2Name names figure 5c.
	l2Name = "Cilium L2 LoadBalancer address answering again after its announcer's power cut"
	// l2Probe is the pause between probes of the address after the cut,
	// each probe a new connection given one second at most.
	l2Probe = 100 * time.Millisecond
	// l2MoveTimeout bounds one move.
	l2MoveTimeout = 3 * time.Minute
	// ciliumClusterTimeout bounds the Cilium cluster's apply and delete.
	ciliumClusterTimeout = 12 * time.Minute
)

// ciliumMachines are the machines the Cilium cluster runs on.
func ciliumMachines() []string { return []string{"c1", "c2", "c3"} }

// l2Figures measures figure 5c, or says why it could not.
func l2Figures(ctx context.Context, l *labEnv, runs int, progress func(string)) []Figure {
	f, err := l2Figure(ctx, l, runs, progress)
	if err != nil {
		progress(fmt.Sprintf("figure 5c not measured: %v", err))
		why, _, _ := strings.Cut(err.Error(), "\n")
		return []Figure{notMeasured("5c", l2Name, why)}
	}
	return []Figure{f}
}

// l2Figure brings the Cilium cluster up on machines of its own, puts an
// echo Service of type LoadBalancer on it and, runs times, cuts the power
// of the node holding the address's announcement lease and times how long
// until the address answers the host (a client on the lab's bridge) again;
// the node is powered on and the cluster healthy before the next run. The
// reference is Cilium's own hand-over bound, from the configuration the
// chart rendered: the lease's duration plus its retry period.
func l2Figure(ctx context.Context, l *labEnv, runs int, progress func(string)) (Figure, error) {
	if _, err := os.Stat(filepath.Join(l.o.Cache, "images", "cilium", "cilium.oci.tar")); err != nil {
		return Figure{}, fmt.Errorf("no Cilium images (scripts/build-images.sh --set cilium builds them): %w", err)
	}
	script := filepath.Join(l.o.Repo, labScript)
	if out, err := l.run(ctx, 5*time.Minute, l.scriptEnv(), filepath.Join(l.o.Repo, "scripts", "lab-registry.sh"), "push", filepath.Join(l.dir, "registry"), "10.77.0.1:5000", "cilium"); err != nil {
		return Figure{}, fmt.Errorf("push Cilium's images: %w\n%s", err, tail(out, 10))
	}
	defer func() {
		if out, err := l.run(context.Background(), 3*time.Minute, l.scriptEnv(), script, append([]string{"machine-down"}, ciliumMachines()...)...); err != nil {
			progress(fmt.Sprintf("machine-down: %v\n%s", err, tail(out, 10)))
		}
	}()
	if out, err := l.run(ctx, 3*time.Minute, l.scriptEnv(), script, append([]string{"machine-up"}, ciliumMachines()...)...); err != nil {
		return Figure{}, fmt.Errorf("machine-up: %w\n%s", err, tail(out, 10))
	}
	manifest, err := l.run(ctx, time.Minute, l.scriptEnv(), script, "manifest", filepath.Join(l.o.Repo, ciliumManifestFile))
	if err != nil {
		return Figure{}, fmt.Errorf("the Cilium manifest: %w\n%s", err, tail(manifest, 10))
	}
	f := filepath.Join(l.dir, "bench-cilium.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o644); err != nil {
		return Figure{}, err
	}
	start := time.Now()
	if out, err := l.kctl(ctx, ciliumClusterTimeout+time.Minute, "kubernetes", "apply", "-f", f, "--yes", "--wait", "--timeout", ciliumClusterTimeout.String()); err != nil {
		return Figure{}, fmt.Errorf("apply %s: %w\n%s", ciliumClusterName, err, tail(out, 20))
	}
	defer func() {
		if out, err := l.kctl(context.Background(), ciliumClusterTimeout+time.Minute, "kubernetes", "delete", ciliumClusterName, "--yes", "--wait", "--timeout", ciliumClusterTimeout.String()); err != nil {
			progress(fmt.Sprintf("delete %s: %v\n%s", ciliumClusterName, err, tail(out, 10)))
		}
	}()
	progress(fmt.Sprintf("5c Cilium cluster ready in %s", time.Since(start).Round(time.Second)))
	ip, err := l.l2Service(ctx)
	if err != nil {
		return Figure{}, err
	}
	bound, boundName, err := l.l2Bound(ctx)
	if err != nil {
		return Figure{}, err
	}
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	answers := func() error {
		resp, err := client.Get("http://" + ip + ":8080/")
		if err != nil {
			return fmt.Errorf("%w: %w", errNotYet, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%w: %s answered %s", errNotYet, ip, resp.Status)
		}
		return nil
	}
	var moves []float64
	for i := range runs {
		if err := pollUntil(ctx, ciliumClusterTimeout, time.Second, "the cluster healthy and "+ip+" answering", func() error {
			if _, err := l.kctl(ctx, 30*time.Second, "kubernetes", "health", ciliumClusterName); err != nil {
				return fmt.Errorf("%w: %w", errNotYet, err)
			}
			return answers()
		}); err != nil {
			return Figure{}, err
		}
		holder, err := l.ciliumKubectl(ctx, "-n", "kube-system", "get", "lease", "cilium-l2announce-"+l2Namespace+"-echo", "-o", "jsonpath={.spec.holderIdentity}")
		m := strings.TrimPrefix(strings.TrimSpace(holder), "lab-")
		if err != nil || !strings.HasPrefix(m, "c") {
			return Figure{}, fmt.Errorf("the announcing node: %q %v", holder, err)
		}
		cut := time.Now()
		if out, err := l.run(ctx, 2*time.Minute, l.scriptEnv(), script, "machine-stop", m); err != nil {
			return Figure{}, fmt.Errorf("cut %s's power: %w\n%s", m, err, tail(out, 10))
		}
		if err := pollUntil(ctx, l2MoveTimeout, l2Probe, ip+" answering after lab-"+m+"'s power cut", answers); err != nil {
			return Figure{}, err
		}
		d := time.Since(cut)
		moves = append(moves, d.Seconds())
		progress(fmt.Sprintf("5c run %d: %s answered %s after its announcer lab-%s lost power", i+1, ip, d.Round(10*time.Millisecond), m))
		if out, err := l.run(ctx, 2*time.Minute, l.scriptEnv(), script, "machine-start", m); err != nil {
			return Figure{}, fmt.Errorf("power %s on: %w\n%s", m, err, tail(out, 10))
		}
	}
	fig := measured("5c", l2Name, "s", moves).withReference(boundName, bound)
	fig = fig.withTarget("ratio <= 1.0", fig.Value != nil && *fig.Value <= bound)
	return fig.withNote(fmt.Sprintf("3 control planes with their own mounts (examples/lab/cilium.yaml), echo pods on two of them behind a LoadBalancer Service in the kcore pool; from the start of scripts/lab.sh machine-stop (SIGKILL to every process of the lease holder) to the first answer of a GET from the host on the lab bridge, a new connection %s after each failed one (1 s timeout)", l2Probe)), nil
}

// ciliumKubectl runs kubectl against the Cilium cluster with c1's admin
// kubeconfig.
func (l *labEnv) ciliumKubectl(ctx context.Context, args ...string) (string, error) {
	argv := append([]string{"--kubeconfig", filepath.Join(l.dir, "c1", "etc", "kubernetes", "admin.conf"), "--request-timeout=5s"}, args...)
	return l.run(ctx, 15*time.Second, os.Environ(), filepath.Join(l.k8sBin, "kubectl"), argv...)
}

// l2Service creates the echo pods on c2 and c3 and the LoadBalancer Service
// echo in front of them, and returns the address Cilium gave it.
func (l *labEnv) l2Service(ctx context.Context) (string, error) {
	objs := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", l2Namespace)
	for _, m := range ciliumMachines()[1:] {
		objs += fmt.Sprintf(`---
apiVersion: v1
kind: Pod
metadata: {name: echo-%[1]s, namespace: %[2]s, labels: {app: echo}}
spec:
  nodeSelector: {kubernetes.io/hostname: lab-%[1]s}
  containers:
  - name: echo
    image: %[3]s
    ports: [{containerPort: 8080}]
    readinessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 2}
`, m, l2Namespace, manifests.EchoImage)
	}
	objs += fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: %s}
spec:
  type: LoadBalancer
  selector: {app: echo}
  ports: [{port: 8080}]
`, l2Namespace)
	f := filepath.Join(l.dir, "bench-l2.yaml")
	if err := os.WriteFile(f, []byte(objs), 0o644); err != nil {
		return "", err
	}
	if out, err := l.ciliumKubectl(ctx, "apply", "-f", f); err != nil {
		return "", fmt.Errorf("create the echo Service: %w\n%s", err, out)
	}
	var ip string
	err := pollUntil(ctx, 5*time.Minute, time.Second, "an address from the kcore pool on the echo Service", func() error {
		out, err := l.ciliumKubectl(ctx, "-n", l2Namespace, "get", "service", "echo", "-o", "jsonpath={.status.loadBalancer.ingress[0].ip}")
		if ip = strings.TrimSpace(out); err != nil || ip == "" {
			return fmt.Errorf("%w: %q %v", errNotYet, out, err)
		}
		return nil
	})
	return ip, err
}

// l2Bound is Cilium's hand-over bound from the configuration the agents
// run with: the announcement lease's duration plus its retry period (a
// candidate tries to take an expired lease that often), each from
// cilium-config, or the agent's own default (its --help) when the chart
// leaves it out.
func (l *labEnv) l2Bound(ctx context.Context) (float64, string, error) {
	help, err := l.run(ctx, 30*time.Second, os.Environ(), filepath.Join(l.o.Cache, "bin", "current", "cilium-agent"), "--help")
	if err != nil {
		return 0, "", fmt.Errorf("cilium-agent --help: %w", err)
	}
	var d [2]time.Duration
	var from [2]string
	for i, key := range []string{"l2-announcements-lease-duration", "l2-announcements-retry-period"} {
		out, err := l.ciliumKubectl(ctx, "-n", "kube-system", "get", "configmap", "cilium-config", "-o", "jsonpath={.data."+key+"}")
		if err != nil {
			return 0, "", fmt.Errorf("read %s from cilium-config: %w", key, err)
		}
		v, where := strings.TrimSpace(out), "cilium-config"
		if v == "" {
			v, where = agentDefault(help, key), "the agent's default"
		}
		if d[i], err = time.ParseDuration(v); err != nil {
			return 0, "", fmt.Errorf("read %s (%s): %q: %w", key, where, v, err)
		}
		from[i] = where
	}
	return (d[0] + d[1]).Seconds(), fmt.Sprintf("Cilium's lease hand-over: lease duration %s (%s) + retry period %s (%s)", d[0], from[0], d[1], from[1]), nil
}

// agentDefault is the default cilium-agent --help gives the flag --key, or "".
func agentDefault(help, key string) string {
	for _, line := range strings.Split(help, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "--"+key {
			continue
		}
		_, def, ok := strings.Cut(line, "(default ")
		if !ok {
			return ""
		}
		v, _, _ := strings.Cut(def, ")")
		return v
	}
	return ""
}
