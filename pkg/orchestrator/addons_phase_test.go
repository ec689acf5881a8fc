package orchestrator

import (
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
)

// coreDNSDeployment is the CoreDNS Deployment as its manifest renders it.
func coreDNSDeployment(t *testing.T) manifests.Workload {
	t.Helper()
	yaml, err := manifests.CoreDNS(manifests.DNS{ClusterIP: "10.96.0.10", ClusterDomain: "cluster.local", Replicas: 2})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := manifests.Deployments(yaml)
	if err != nil || len(deps) != 1 {
		t.Fatalf("CoreDNS deployments %+v, %v", deps, err)
	}
	return deps[0]
}

// A cluster becomes ready without waiting for its add-ons; CoreDNS that
// cannot pull its image on one node turns it degraded once AddonGrace has
// passed since the bootstrap (not a second before), with the Addons
// condition naming the node and the image, and ready again once CoreDNS is
// available.
func TestAddonsUnavailableBeyondGraceDegradeTheCluster(t *testing.T) {
	const grace = 3 * time.Minute
	e := newEnv(t, 1)
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	clock := time.Now().UTC().Truncate(time.Second)
	cfg := e.cfg
	cfg.Node = e.leader()
	cfg.Now = func() time.Time { return clock }
	cfg.AddonGrace = grace
	cfg.LastSeen = func(string) (time.Time, bool) { return clock, true }
	o, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.started = time.Now()
	dns := coreDNSDeployment(t)
	e.health.kube.setDeployment(dns.Namespace, dns.Name, 2, 1)
	e.health.kube.addAddonPod(dns.Namespace, "coredns-a", "node-11", dns.MatchLabels, readyPod)
	e.health.kube.addAddonPod(dns.Namespace, "coredns-b", "node-14", dns.MatchLabels,
		waiting("coredns", manifests.CoreDNSImage, "ErrImagePull", "failed to pull and unpack image: dial tcp: connection refused", 0, nil))

	e.reconcileOnce(o, false)
	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	e.reportAll("lab")
	e.reconcileOnce(o, true)
	got, _ := e.cluster("lab")
	if got.Status.Phase != api.PhaseReady {
		t.Fatalf("phase %q, want ready without waiting for the add-ons: %+v", got.Status.Phase, got.Status.Conditions)
	}
	cond := findCondition(got.Status.Conditions, CondAddons)
	if cond == nil || cond.Status != StatusFalse || cond.Reason != "ErrImagePull" {
		t.Fatalf("Addons = %+v, want False ErrImagePull", cond)
	}
	for _, w := range []string{"kube-system/coredns 1/2 available", "coredns-b", "node-14", manifests.CoreDNSImage, "connection refused"} {
		if !strings.Contains(cond.Message, w) {
			t.Errorf("Addons message %q lacks %q", cond.Message, w)
		}
	}

	clock = clock.Add(grace - time.Second)
	e.reconcileOnce(o, true)
	if got, _ := e.cluster("lab"); got.Status.Phase != api.PhaseReady {
		t.Fatalf("a second before the grace: phase %q, want ready", got.Status.Phase)
	}
	clock = clock.Add(time.Second)
	e.reconcileOnce(o, true)
	if got, _ := e.cluster("lab"); got.Status.Phase != api.PhaseDegraded {
		t.Fatalf("at the grace: phase %q, want degraded: %+v", got.Status.Phase, got.Status.Conditions)
	}

	e.health.kube.clearAddons()
	e.health.kube.setDeployment(dns.Namespace, dns.Name, 2, 2)
	clock = clock.Add(time.Second)
	e.reconcileOnce(o, true)
	got, _ = e.cluster("lab")
	if got.Status.Phase != api.PhaseReady || !isTrue(got.Status.Conditions, CondAddons) {
		t.Fatalf("CoreDNS available: phase %q, Addons %+v; want ready and True", got.Status.Phase, findCondition(got.Status.Conditions, CondAddons))
	}
}
