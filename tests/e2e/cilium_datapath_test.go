package e2e

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/render"
)

// The Cilium cluster the lab runs on machines of its own
// (examples/lab/cilium.yaml, on scripts/lab.sh machine-up c1 c2 c3).
const (
	ciliumClusterName  = "lab-cilium"
	ciliumManifestFile = "examples/lab/cilium.yaml"
	// ciliumPool is the manifest's LoadBalancer pool.
	ciliumPool = "10.77.0.240/29"
	// ciliumTimeout bounds the cluster's create and delete.
	ciliumTimeout = 12 * time.Minute
	// ciliumImagesTimeout bounds pushing Cilium's images into the lab's
	// registry.
	ciliumImagesTimeout = 5 * time.Minute
	// l2MoveTimeout bounds how long the LoadBalancer address may take to
	// answer again after the node announcing it dies.
	l2MoveTimeout = 3 * time.Minute
)

// ciliumMachines are the machines of the Cilium cluster: cN, address
// 10.77.0.2N, as scripts/lab.sh machine-up makes them.
func ciliumMachines() []labNode {
	var out []labNode
	for i := 1; i <= 3; i++ {
		out = append(out, labNode{fmt.Sprintf("lab-c%d", i), fmt.Sprintf("c%d", i), fmt.Sprintf("10.77.0.2%d", i)})
	}
	return out
}

// ciliumManifest is the Cilium cluster's manifest as scripts/lab.sh
// manifest prints it: its registry mirrors carry the lab's CA.
func ciliumManifest(t *testing.T, l *lab) string {
	t.Helper()
	out, err := run(30*time.Second, nil, filepath.Join(l.repo, labScript), "manifest", filepath.Join(l.repo, ciliumManifestFile))
	if err != nil || !strings.Contains(out, "name: "+ciliumClusterName+"\n") || !strings.Contains(out, "caPem: |") || !strings.Contains(out, ciliumPool) {
		t.Fatalf("scripts/lab.sh manifest %s: %v\n%s", ciliumManifestFile, err, out)
	}
	return out
}

// kubectlCilium runs kubectl against the Cilium cluster with c1's admin
// kubeconfig (its server is the cluster's VIP).
func (l *lab) kubectlCilium(args ...string) (string, error) {
	argv := append([]string{filepath.Join(l.k8sBin, "kubectl"), "--kubeconfig", filepath.Join(l.dir, "c1", "etc", "kubernetes", "admin.conf"), "--request-timeout=5s"}, args...)
	return run(15*time.Second, nil, argv...)
}

// testCiliumDatapath: a cluster with cni: cilium on machines of its own
// runs Cilium's real datapath, installed by kcore's helm oneshot from the
// images the lab builds: its agents and operator are ready (health says
// so); no kube-proxy runs; pods get addresses from their node's pod CIDR
// and reach each other across nodes over native routing; a ClusterIP
// Service and cluster DNS answer through Cilium's service load balancing;
// a LoadBalancer Service gets an address from the kcore pool, which a
// client in another namespace on the bridge reaches through Cilium's ARP
// announcement; when the announcing node's power is cut, another node
// takes the address over (how long it took is logged); and a changed
// setting upgrades Cilium in place (checkCiliumUpgradesInPlace).
func testCiliumDatapath(t *testing.T, l *lab) {
	if out, err := run(ciliumImagesTimeout, nil, filepath.Join(l.repo, "scripts", "lab-registry.sh"), "push", filepath.Join(l.dir, "registry"), labHost+":5000", "cilium"); err != nil {
		t.Fatalf("push Cilium's images into the lab registry (scripts/build-images.sh --set cilium builds them; make e2e does): %v\n%s", err, out)
	}
	var names []string
	for _, m := range ciliumMachines() {
		names = append(names, m.name)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, args := range [][]string{{"get", "pods", "-A", "-o", "wide"}, {"get", "endpointslices", "-A"}, {"get", "events", "-A", "--sort-by=.lastTimestamp"}} {
				out, err := l.kubectlCilium(args...)
				t.Logf("kubectl %s (%v):\n%s", strings.Join(args, " "), err, out)
			}
			// The machines go below: keep their logs first.
			l.keepLogs()
		}
		if out, err := l.script(3*time.Minute, nil, append([]string{"machine-down"}, names...)...); err != nil {
			t.Errorf("scripts/lab.sh machine-down: %v\n%s", err, out)
		}
	})
	if out, err := l.script(3*time.Minute, nil, append([]string{"machine-up"}, names...)...); err != nil {
		t.Fatalf("scripts/lab.sh machine-up: %v\n%s", err, out)
	}
	f := filepath.Join(t.TempDir(), "lab-cilium.yaml")
	if err := os.WriteFile(f, []byte(ciliumManifest(t, l)), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if out, err := l.kctl(ciliumTimeout+time.Minute, "kubernetes", "apply", "-f", f, "--yes", "--wait", "--timeout", ciliumTimeout.String()); err != nil {
		t.Fatalf("kctl kubernetes apply %s: %v\n%s", ciliumClusterName, err, out)
	}
	t.Logf("Cilium cluster ready in %s", time.Since(start).Round(time.Second))
	eventually(t, "health of the Cilium cluster (its agents and operator included)", ciliumTimeout, func() error {
		_, err := l.kctl(30*time.Second, "kubernetes", "health", ciliumClusterName)
		return err
	})
	for _, m := range ciliumMachines() {
		s, err := l.units(m.name)
		if err != nil {
			t.Fatal(err)
		}
		for name := range s.Units {
			if strings.Contains(name, "kube-proxy") {
				t.Errorf("%s runs %s: Cilium replaces kube-proxy", m.id, name)
			}
		}
	}
	// RBAC, CoreDNS, the kube-dns Service and the Cilium pool and L2
	// policy (this cluster has no volumes, so no provisioner).
	checkKubectlManifests(t, l.kubectlCilium, filepath.Join(l.dir, "c1"), 4)
	checkCiliumPods(t, l)
	checkCiliumLoadBalancer(t, l)
	checkCiliumUpgradesInPlace(t, l, f)
	if out, err := l.kctl(ciliumTimeout+time.Minute, "kubernetes", "delete", ciliumClusterName, "--yes", "--wait", "--timeout", ciliumTimeout.String()); err != nil {
		t.Fatalf("kctl kubernetes delete %s: %v\n%s", ciliumClusterName, err, out)
	}
}

// ciliumWorkloadNS holds the Cilium scenario's pods and Services.
const ciliumWorkloadNS = "kcore-cilium-e2e"

// checkCiliumPods: echo servers on two nodes get addresses from their
// nodes' pod CIDRs; a client on a third reaches one of them by its pod
// address (native routing across nodes) and through a ClusterIP Service
// (Cilium's load balancing at the pod's interface, no kube-proxy), and
// resolves names through cluster DNS (CoreDNS behind its own ClusterIP).
func checkCiliumPods(t *testing.T, l *lab) {
	ms := ciliumMachines()
	if out, err := l.kubectlCilium("create", "namespace", ciliumWorkloadNS); err != nil {
		t.Fatalf("create namespace: %v\n%s", err, out)
	}
	objs := []string{}
	for _, m := range ms[1:] {
		objs = append(objs, strings.ReplaceAll(echoPod(m.id), "namespace: "+workloadNS, "namespace: "+ciliumWorkloadNS))
	}
	objs = append(objs, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: echo, namespace: %s}
spec:
  selector: {app: echo}
  ports: [{port: 8080}]
`, ciliumWorkloadNS))
	l.kubectlApplyTo(t, l.kubectlCilium, objs...)
	podCIDR := map[string]netip.Prefix{}
	for _, m := range ms {
		out, err := l.kubectlCilium("get", "node", m.id, "-o", "jsonpath={.spec.podCIDR}")
		p, perr := netip.ParsePrefix(strings.TrimSpace(out))
		if err != nil || perr != nil {
			t.Fatalf("pod CIDR of %s: %q %v %v", m.id, out, err, perr)
		}
		podCIDR[m.id] = p
	}
	podIP := map[string]string{}
	eventually(t, "the echo pods ready", workloadTimeout, func() error {
		for _, m := range ms[1:] {
			out, err := l.kubectlCilium("-n", ciliumWorkloadNS, "get", "pod", "echo-"+m.id, "-o", "json")
			if err != nil {
				return err
			}
			var p struct {
				Status struct {
					PodIP      string
					Conditions []struct{ Type, Status string }
				}
			}
			if err := json.Unmarshal([]byte(out), &p); err != nil {
				return err
			}
			if !slices.ContainsFunc(p.Status.Conditions, func(c struct{ Type, Status string }) bool { return c.Type == "Ready" && c.Status == "True" }) {
				return fmt.Errorf("echo-%s not ready", m.id)
			}
			podIP[m.id] = p.Status.PodIP
		}
		return nil
	})
	for id, ip := range podIP {
		a, err := netip.ParseAddr(ip)
		if err != nil || !podCIDR[id].Contains(a) {
			t.Errorf("echo-%s has address %q, outside its node's pod CIDR %s", id, ip, podCIDR[id])
		}
	}
	eventually(t, "cluster DNS with a ready backend", workloadTimeout, func() error {
		out, err := l.kubectlCilium("-n", "kube-system", "get", "endpointslices", "-l", "kubernetes.io/service-name=kube-dns", "-o", "jsonpath={.items[*].endpoints[?(@.conditions.ready==true)].addresses[0]}")
		if err == nil && strings.TrimSpace(out) == "" {
			err = fmt.Errorf("kube-dns has no ready endpoint")
		}
		return err
	})
	client := strings.ReplaceAll(echoClientPod("client", ms[0].id,
		"http://"+podIP[ms[2].id]+":8080/=echo-"+ms[2].id,
		"http://echo."+ciliumWorkloadNS+".svc.cluster.local:8080/=echo-",
		"kubernetes.default.svc.cluster.local"), "namespace: "+workloadNS, "namespace: "+ciliumWorkloadNS)
	l.kubectlApplyTo(t, l.kubectlCilium, client)
	l.waitSucceededIn(t, l.kubectlCilium, ciliumWorkloadNS, "client")
}

// checkCiliumLoadBalancer: a LoadBalancer Service gets an address from the
// kcore pool and answers a client in n1's namespace (another machine on
// the bridge, outside the cluster) through the node that announces it over
// ARP; then that node's power is cut and the address answers again through
// another, which the test times.
func checkCiliumLoadBalancer(t *testing.T, l *lab) {
	l.kubectlApplyTo(t, l.kubectlCilium, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: echo-lb, namespace: %s}
spec:
  type: LoadBalancer
  selector: {app: echo}
  ports: [{port: 8080}]
`, ciliumWorkloadNS))
	pool := netip.MustParsePrefix(ciliumPool)
	var lbIP string
	eventually(t, "an address from the kcore pool on echo-lb", workloadTimeout, func() error {
		out, err := l.kubectlCilium("-n", ciliumWorkloadNS, "get", "service", "echo-lb", "-o", "jsonpath={.status.loadBalancer.ingress[0].ip}")
		if err != nil {
			return err
		}
		a, err := netip.ParseAddr(strings.TrimSpace(out))
		if err != nil || !pool.Contains(a) {
			return fmt.Errorf("echo-lb ingress %q, want an address in %s", out, pool)
		}
		lbIP = a.String()
		return nil
	})
	get := func() error {
		out, err := run(5*time.Second, nil, "ip", "netns", "exec", labNetns("n1"), "curl", "-fsS", "--max-time", "1", "http://"+lbIP+":8080/")
		if err == nil && !strings.Contains(out, "echo-") {
			err = fmt.Errorf("%s answered %q", lbIP, out)
		}
		return err
	}
	eventually(t, "echo-lb answering from n1 through the L2 announcement", workloadTimeout, get)
	lease := "cilium-l2announce-" + ciliumWorkloadNS + "-echo-lb"
	holder, err := l.kubectlCilium("-n", render.CiliumNamespace, "get", "lease", lease, "-o", "jsonpath={.spec.holderIdentity}")
	holder = strings.TrimSpace(holder)
	i := slices.IndexFunc(ciliumMachines(), func(m labNode) bool { return m.id == holder })
	if err != nil || i < 0 {
		t.Fatalf("the announcing node (lease %s): %q %v", lease, holder, err)
	}
	dead := ciliumMachines()[i]
	cut := time.Now()
	if out, err := l.script(2*time.Minute, nil, "machine-stop", dead.name); err != nil {
		t.Fatalf("cut %s's power: %v\n%s", dead.id, err, out)
	}
	if err := poll(l2MoveTimeout, get); err != nil {
		t.Fatalf("echo-lb did not answer within %s of %s's power cut: %v", l2MoveTimeout, dead.id, err)
	}
	t.Logf("L2 announcement moved: %s answered again %s after its announcer %s lost power", lbIP, time.Since(cut).Round(100*time.Millisecond), dead.id)
	if out, err := l.script(2*time.Minute, nil, "machine-start", dead.name); err != nil {
		t.Fatalf("power %s on: %v\n%s", dead.id, err, out)
	}
	eventually(t, "health of the Cilium cluster after the power cut", ciliumTimeout, func() error {
		_, err := l.kctl(30*time.Second, "kubernetes", "health", ciliumClusterName)
		return err
	})
}

// checkCiliumUpgradesInPlace: a changed Cilium setting (the MTU) applied to
// the live cluster re-runs the oneshot, which upgrades the release in
// place and waits for it: the agents' DaemonSet is the same object, every
// agent pod is new and reads the new MTU, and the cluster is healthy.
func checkCiliumUpgradesInPlace(t *testing.T, l *lab, manifest string) {
	objects := func() (uid string, pods []string) {
		t.Helper()
		out, err := l.kubectlCilium("-n", render.CiliumNamespace, "get", "daemonset", render.CiliumAgentDaemonSet, "-o", "jsonpath={.metadata.uid}")
		if err != nil {
			t.Fatalf("the agents' DaemonSet: %v\n%s", err, out)
		}
		names, err := l.kubectlCilium("-n", render.CiliumNamespace, "get", "pods", "-l", "k8s-app=cilium", "-o", "jsonpath={.items[*].metadata.name}")
		if err != nil {
			t.Fatalf("the agents' pods: %v\n%s", err, names)
		}
		return strings.TrimSpace(out), strings.Fields(names)
	}
	uid1, pods1 := objects()
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	changed := edit(t, string(data), "  cilium:\n", "  cilium:\n    mtu: 1450\n")
	if err := os.WriteFile(manifest, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := l.kctl(ciliumTimeout+time.Minute, "kubernetes", "apply", "-f", manifest, "--yes", "--wait", "--timeout", ciliumTimeout.String())
	if err != nil {
		t.Fatalf("kctl kubernetes apply with MTU 1450: %v\n%s", err, out)
	}
	for _, want := range []string{`spec.cilium.mtu: "1500" → "1450"`, "restart unit " + render.UnitCilium + ":"} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	eventually(t, "the agents rolled to MTU 1450", ciliumTimeout, func() error {
		mtu, err := l.kubectlCilium("-n", render.CiliumNamespace, "get", "configmap", "cilium-config", "-o", "jsonpath={.data.mtu}")
		if err != nil || strings.TrimSpace(mtu) != "1450" {
			return fmt.Errorf("cilium-config mtu %q (%v)", mtu, err)
		}
		uid2, pods2 := objects()
		if uid2 != uid1 {
			t.Fatalf("the upgrade replaced the agents' DaemonSet (uid %s, then %s)", uid1, uid2)
		}
		if len(pods2) != len(ciliumMachines()) {
			return fmt.Errorf("agent pods %v", pods2)
		}
		for _, p := range pods2 {
			if slices.Contains(pods1, p) {
				return fmt.Errorf("agent pod %s predates the upgrade", p)
			}
		}
		_, err = l.kctl(30*time.Second, "kubernetes", "health", ciliumClusterName)
		return err
	})
}
