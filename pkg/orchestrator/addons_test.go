package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// addonFixture is a kubeFixture with the add-on Deployments rendered for
// its cluster.
type addonFixture struct {
	*kubeFixture
	deps []manifests.Workload
}

// newAddonFixture renders the lab cluster (edited by edit) and reads its
// add-on Deployments as the orchestrator does.
func newAddonFixture(t *testing.T, edit func(*api.KubernetesCluster)) *addonFixture {
	t.Helper()
	f := newKubeFixture(t)
	if edit != nil {
		edit(f.c)
	}
	nodes := map[string]*api.Node{}
	for _, m := range f.c.Spec.Members() {
		nodes[m.NodeID] = &api.Node{Metadata: api.ObjectMeta{Name: m.NodeID}, Facts: api.NodeFacts{Hostname: m.NodeID, Addresses: []string{m.AdvertiseAddress}}}
	}
	rendered, err := render.Render(f.c, f.conn.s, nodes, render.Options{UnreportedPool: "pool"})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := addonWorkloads(f.c, rendered)
	if err != nil {
		t.Fatal(err)
	}
	return &addonFixture{kubeFixture: f, deps: deps}
}

// dep is the rendered Deployment in namespace.
func (f *addonFixture) dep(t *testing.T, namespace string) manifests.Workload {
	t.Helper()
	for _, d := range f.deps {
		if d.Namespace == namespace {
			return d
		}
	}
	t.Fatalf("no add-on deployment in %s: %+v", namespace, f.deps)
	return manifests.Workload{}
}

// readyPod marks a pod Ready with its containers running.
func readyPod(p *kubePodJSON) {
	p.Status.Phase = "Running"
	p.Status.Conditions = []KubeCondition{{Type: "PodScheduled", Status: "True"}, {Type: "Ready", Status: "True"}}
}

// waiting gives a pod one container waiting for reason.
func waiting(name, image, reason, message string, restarts int, last *KubeContainerState) func(*kubePodJSON) {
	return func(p *kubePodJSON) {
		p.Status.Conditions = []KubeCondition{{Type: "PodScheduled", Status: "True"}, {Type: "Ready", Status: "False", Reason: "ContainersNotReady"}}
		cs := kubeContainerStatusJSON{Name: name, Image: image, RestartCount: restarts}
		cs.State.Waiting = &KubeContainerState{Reason: reason, Message: message}
		cs.LastState.Terminated = last
		p.Status.ContainerStatuses = []kubeContainerStatusJSON{cs}
	}
}

func (f *addonFixture) check() api.Condition {
	return f.o.checkAddons(context.Background(), f.conn, f.deps)
}

func TestAddonsConditionNamesWhatBlocksThem(t *testing.T) {
	const image = manifests.CoreDNSImage
	tests := []struct {
		name   string
		setup  func(f *addonFixture, dns manifests.Workload)
		status string
		reason string
		words  []string
		absent []string
	}{
		{
			name: "all available",
			setup: func(f *addonFixture, dns manifests.Workload) {
				f.kube.setDeployment(dns.Namespace, dns.Name, 2, 2)
			},
			status: StatusTrue, reason: ReasonAddonsAvailable,
			words: []string{"kube-system/coredns 2/2 available"},
		},
		{
			name: "image pull failure on one node",
			setup: func(f *addonFixture, dns manifests.Workload) {
				f.kube.setDeployment(dns.Namespace, dns.Name, 2, 1)
				f.kube.addAddonPod(dns.Namespace, "coredns-a", "node-11", dns.MatchLabels, readyPod)
				f.kube.addAddonPod(dns.Namespace, "coredns-b", "node-14", dns.MatchLabels,
					waiting("coredns", image, "ImagePullBackOff", `Back-off pulling image "`+image+`"`, 0, nil))
			},
			status: StatusFalse, reason: "ImagePullBackOff",
			words:  []string{"kube-system/coredns 1/2 available", "coredns-b", "image " + image + " cannot be pulled on node node-14", "Back-off pulling image"},
			absent: []string{"coredns-a", "node-11"},
		},
		{
			name: "crash loop",
			setup: func(f *addonFixture, dns manifests.Workload) {
				f.kube.setDeployment(dns.Namespace, dns.Name, 2, 0)
				f.kube.addAddonPod(dns.Namespace, "coredns-a", "node-12", dns.MatchLabels,
					waiting("coredns", image, "CrashLoopBackOff", "back-off 5m0s restarting failed container", 7, &KubeContainerState{Reason: "Error", ExitCode: 1}))
			},
			status: StatusFalse, reason: "CrashLoopBackOff",
			words: []string{"pod coredns-a on node node-12", "container coredns restarted 7 times", "last exit Error code 1"},
		},
		{
			name: "unschedulable",
			setup: func(f *addonFixture, dns manifests.Workload) {
				f.kube.setDeployment(dns.Namespace, dns.Name, 2, 0)
				f.kube.addAddonPod(dns.Namespace, "coredns-a", "", dns.MatchLabels, func(p *kubePodJSON) {
					p.Status.Conditions = []KubeCondition{{Type: "PodScheduled", Status: "False", Reason: "Unschedulable",
						Message: "0/4 nodes are available: 4 node(s) had untolerated taint {example.com/x: }."}}
				})
			},
			status: StatusFalse, reason: "Unschedulable",
			words: []string{"pod coredns-a not scheduled: 0/4 nodes are available: 4 node(s) had untolerated taint"},
		},
		{
			name: "sandbox error from the latest warning event",
			setup: func(f *addonFixture, dns manifests.Workload) {
				f.kube.setDeployment(dns.Namespace, dns.Name, 1, 0)
				f.kube.addAddonPod(dns.Namespace, "coredns-a", "node-13", dns.MatchLabels, waiting("coredns", image, "ContainerCreating", "", 0, nil))
				f.kube.addEvent(dns.Namespace, "coredns-a", "Warning", "FailedCreatePodSandBox", "an older failure", "2026-12-01T10:00:00Z")
				f.kube.addEvent(dns.Namespace, "coredns-a", "Warning", "FailedCreatePodSandBox",
					`Failed to create pod sandbox: rpc error: failed to get sandbox image "registry.k8s.io/pause:3.10"`, "2026-12-01T10:05:00Z")
				f.kube.addEvent(dns.Namespace, "coredns-a", "Normal", "Scheduled", "Successfully assigned", "2026-12-01T10:06:00Z")
				f.kube.addEvent(dns.Namespace, "coredns-other", "Warning", "BackOff", "another pod's event", "2026-12-01T10:07:00Z")
			},
			status: StatusFalse, reason: "ContainerCreating",
			words:  []string{"pod coredns-a on node node-13: ContainerCreating: FailedCreatePodSandBox", `failed to get sandbox image "registry.k8s.io/pause:3.10"`},
			absent: []string{"older", "another pod", "Successfully"},
		},
		{
			name:   "not applied yet",
			setup:  func(*addonFixture, manifests.Workload) {},
			status: StatusFalse, reason: ReasonAddonMissing,
			words: []string{"deployment kube-system/coredns not found"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newAddonFixture(t, nil)
			if len(f.deps) != 1 {
				t.Fatalf("add-on deployments %+v, want CoreDNS alone (no provisioner in the lab cluster)", f.deps)
			}
			tc.setup(f, f.dep(t, manifests.KubeDNSNamespace))
			got := f.check()
			if got.Type != CondAddons || got.Status != tc.status || got.Reason != tc.reason {
				t.Errorf("condition %+v, want %s %s", got, tc.status, tc.reason)
			}
			for _, w := range tc.words {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q lacks %q", got.Message, w)
				}
			}
			for _, w := range tc.absent {
				if strings.Contains(got.Message, w) {
					t.Errorf("message %q names %q", got.Message, w)
				}
			}
		})
	}
}

// The provisioner's Deployment is checked when the cluster renders it and
// not at all when spec.localProvisioner is disabled.
func TestAddonsProvisionerCheckedOnlyWhenEnabled(t *testing.T) {
	enable := func(c *api.KubernetesCluster) {
		c.Spec.LocalProvisioner = api.LocalProvisionerSpec{Enabled: true, Volumes: []api.VolumeSpec{
			{Name: "data", NodeID: "node-14", StorageClass: "lvm", SizeBytes: 1 << 30},
		}}
	}
	for _, tc := range []struct {
		name    string
		edit    func(*api.KubernetesCluster)
		checked bool
	}{{"enabled", enable, true}, {"disabled", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newAddonFixture(t, tc.edit)
			dns := f.dep(t, manifests.KubeDNSNamespace)
			f.kube.setDeployment(dns.Namespace, dns.Name, 2, 2)
			got := f.check()
			calls := strings.Join(f.kube.takeCalls(), "\n")
			if touched := strings.Contains(calls, "local-path-storage"); touched != tc.checked {
				t.Errorf("provisioner read %v, want %v; calls:\n%s", touched, tc.checked, calls)
			}
			if !tc.checked {
				if got.Status != StatusTrue || strings.Contains(got.Message, "local-path") {
					t.Errorf("condition %+v, want True naming CoreDNS only", got)
				}
				return
			}
			if got.Status != StatusFalse || got.Reason != ReasonAddonMissing || !strings.Contains(got.Message, "deployment local-path-storage/local-path-provisioner not found") {
				t.Errorf("condition %+v, want False NotFound naming the provisioner", got)
			}
			lp := f.dep(t, "local-path-storage")
			f.kube.setDeployment(lp.Namespace, lp.Name, 1, 1)
			if got := f.check(); got.Status != StatusTrue || !strings.Contains(got.Message, "local-path-storage/local-path-provisioner 1/1 available") {
				t.Errorf("condition %+v, want True naming both", got)
			}
		})
	}
}

// What a check reads is bounded: MaxAddonPods pods listed, events of
// MaxAddonBlockedPods pods only, each text at most MaxAddonText bytes.
func TestAddonsCheckReadsBoundedAmounts(t *testing.T) {
	f := newAddonFixture(t, nil)
	dns := f.dep(t, manifests.KubeDNSNamespace)
	f.kube.setDeployment(dns.Namespace, dns.Name, 30, 0)
	long := strings.Repeat("x", 4*MaxAddonText)
	for i := range MaxAddonPods + 5 {
		name := fmt.Sprintf("coredns-%02d", i)
		f.kube.addAddonPod(dns.Namespace, name, "node-11", dns.MatchLabels, waiting("coredns", "img", "ContainerCreating", "", 0, nil))
		f.kube.addEvent(dns.Namespace, name, "Warning", "FailedCreatePodSandBox", long, "2026-12-01T10:00:00Z")
	}
	f.kube.takeCalls()
	got := f.check()
	var pods, events int
	for _, c := range f.kube.takeCalls() {
		switch {
		case strings.Contains(c, "/pods?"):
			pods++
			if !strings.Contains(c, fmt.Sprintf("limit=%d", MaxAddonPods)) {
				t.Errorf("pods listed without limit %d: %s", MaxAddonPods, c)
			}
		case strings.Contains(c, "/events?"):
			events++
			if !strings.Contains(c, fmt.Sprintf("limit=%d", MaxAddonEvents)) {
				t.Errorf("events listed without limit %d: %s", MaxAddonEvents, c)
			}
		}
	}
	if pods != 1 || events != MaxAddonBlockedPods {
		t.Errorf("%d pod lists and %d event lists, want 1 and %d", pods, events, MaxAddonBlockedPods)
	}
	if n := strings.Count(got.Message, "pod coredns-"); n != MaxAddonBlockedPods {
		t.Errorf("message names %d pods, want %d: %s", n, MaxAddonBlockedPods, got.Message)
	}
	if want := fmt.Sprintf("%d more pods not ready", MaxAddonPods-MaxAddonBlockedPods); !strings.Contains(got.Message, want) {
		t.Errorf("message %q lacks %q", got.Message, want)
	}
	if strings.Contains(got.Message, strings.Repeat("x", MaxAddonText)) {
		t.Errorf("an event message was not clipped to %d bytes", MaxAddonText)
	}
}

func TestClipAtTheBound(t *testing.T) {
	at := strings.Repeat("a", MaxAddonText)
	if got := clip(at); got != at {
		t.Errorf("clip of %d bytes changed it", MaxAddonText)
	}
	over := clip(at + "b")
	if len(over) != MaxAddonText || !strings.HasSuffix(over, "...") {
		t.Errorf("clip of %d bytes = %d bytes %q, want %d ending ...", MaxAddonText+1, len(over), over[len(over)-5:], MaxAddonText)
	}
	if got := clip(strings.Repeat("é", MaxAddonText)); len(got) > MaxAddonText || !strings.HasSuffix(got, "é...") {
		t.Errorf("clip cut a rune: %q", got[len(got)-6:])
	}
	if got := clip("line one\nline two\ttab"); got != "line one line two tab" {
		t.Errorf("clip = %q, want one line", got)
	}
}

func TestReasonWordKeepsAWord(t *testing.T) {
	for in, want := range map[string]string{
		"ImagePullBackOff":      "ImagePullBackOff",
		"":                      "Def",
		"two words":             "Def",
		strings.Repeat("A", 64): strings.Repeat("A", 64),
		strings.Repeat("A", 65): "Def",
		"Ünicode":               "Def",
	} {
		if got := reasonWord(in, "Def"); got != want {
			t.Errorf("reasonWord(%q) = %q, want %q", in, got, want)
		}
	}
}

// The grace runs from the later of the bootstrap and the add-ons' last
// change to False, and ends exactly at AddonGrace.
func TestAddonsOverdueAtTheGraceBound(t *testing.T) {
	const grace = 5 * time.Minute
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	conds := func(status, addonsSince, bootSince string) []api.Condition {
		return []api.Condition{
			{Type: CondAddons, Status: status, Since: addonsSince},
			{Type: CondBootstrapped, Status: StatusTrue, Since: bootSince},
		}
	}
	tests := []struct {
		name  string
		conds []api.Condition
		now   time.Time
		want  bool
	}{
		{"within the grace", conds(StatusFalse, at(0), at(0)), t0.Add(grace - time.Second), false},
		{"at the grace", conds(StatusFalse, at(0), at(0)), t0.Add(grace), true},
		{"counted from a later bootstrap", conds(StatusFalse, at(0), at(time.Minute)), t0.Add(grace), false},
		{"later bootstrap, at its grace", conds(StatusFalse, at(0), at(time.Minute)), t0.Add(time.Minute + grace), true},
		{"counted from the last change", conds(StatusFalse, at(time.Hour), at(0)), t0.Add(time.Hour + grace - time.Second), false},
		{"available", conds(StatusTrue, at(0), at(0)), t0.Add(time.Hour), false},
		{"unknown", conds(StatusUnknown, at(0), at(0)), t0.Add(time.Hour), false},
		{"never bootstrapped", []api.Condition{{Type: CondAddons, Status: StatusFalse, Since: at(0)}}, t0.Add(time.Hour), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := addonsOverdue(tc.conds, tc.now, grace); got != tc.want {
				t.Errorf("addonsOverdue = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAddonsOfALaterSlotAreChecked: a cluster in slot 1 renders its add-on
// manifests under its own directory, and health reads them from there, so
// its CoreDNS is checked like the primary's instead of "no add-ons".
func TestAddonsOfALaterSlotAreChecked(t *testing.T) {
	f := newAddonFixture(t, func(c *api.KubernetesCluster) { c.Status.Slot = 1 })
	dns := f.dep(t, "kube-system")
	f.kube.setDeployment(dns.Namespace, dns.Name, 2, 0)
	if cond := f.check(); cond.Status != StatusFalse || !strings.Contains(cond.Message, "kube-system/coredns 0/2 available") {
		t.Fatalf("condition of a slot-1 cluster with CoreDNS down = %+v", cond)
	}
}

// ciliumAddonFixture is an addonFixture whose workloads are those of the
// same cluster on port 6443, where it runs Cilium (on the fixture's port it
// would run the bridge CNI); the checks still talk to the fixture's fake API.
func ciliumAddonFixture(t *testing.T) *addonFixture {
	t.Helper()
	f := newAddonFixture(t, nil)
	c := labCluster(t, f.c.Metadata.Name, 6443)
	nodes := map[string]*api.Node{}
	for _, m := range c.Spec.Members() {
		nodes[m.NodeID] = &api.Node{Metadata: api.ObjectMeta{Name: m.NodeID}, Facts: api.NodeFacts{Hostname: m.NodeID, Addresses: []string{m.AdvertiseAddress}}}
	}
	rendered, err := render.Render(c, f.conn.s, nodes, render.Options{UnreportedPool: "pool"})
	if err != nil {
		t.Fatal(err)
	}
	if f.deps, err = addonWorkloads(c, rendered); err != nil {
		t.Fatal(err)
	}
	return f
}

// On a Cilium cluster the agents' DaemonSet and the operator are checked
// before CoreDNS, an agent not ready is named with its node and what keeps
// it, and a bridge cluster reads neither.
func TestAddonsCheckCiliumPerNode(t *testing.T) {
	f := ciliumAddonFixture(t)
	var kinds []string
	for _, w := range f.deps {
		kinds = append(kinds, w.Kind+" "+w.String())
	}
	want := []string{"DaemonSet kube-system/cilium", "Deployment kube-system/cilium-operator", "Deployment kube-system/coredns"}
	if strings.Join(kinds, ", ") != strings.Join(want, ", ") {
		t.Fatalf("add-on workloads %v, want %v", kinds, want)
	}
	agents, op, dns := f.deps[0], f.deps[1], f.deps[2]

	t.Run("not applied yet", func(t *testing.T) {
		got := f.check()
		if got.Status != StatusFalse || got.Reason != ReasonAddonMissing || !strings.Contains(got.Message, "daemonset kube-system/cilium not found") {
			t.Fatalf("condition %+v", got)
		}
	})
	t.Run("one agent cannot pull its image", func(t *testing.T) {
		const image = "quay.io/cilium/cilium:v1.20.2"
		f.kube.setDaemonSet(agents.Namespace, agents.Name, 4, 3)
		f.kube.setDeployment(op.Namespace, op.Name, 2, 2)
		f.kube.setDeployment(dns.Namespace, dns.Name, 2, 2)
		for _, n := range []string{"node-11", "node-12", "node-13"} {
			f.kube.addAddonPod(agents.Namespace, "cilium-"+n, n, agents.MatchLabels, readyPod)
		}
		f.kube.addAddonPod(agents.Namespace, "cilium-x7", "node-14", agents.MatchLabels,
			waiting("cilium-agent", image, "ImagePullBackOff", `Back-off pulling image "`+image+`"`, 0, nil))
		got := f.check()
		if got.Status != StatusFalse || got.Reason != "ImagePullBackOff" {
			t.Fatalf("condition %+v, want False ImagePullBackOff", got)
		}
		for _, w := range []string{"kube-system/cilium 3/4 available", "cilium-x7", "cannot be pulled on node node-14", "kube-system/cilium-operator 2/2 available", "kube-system/coredns 2/2 available"} {
			if !strings.Contains(got.Message, w) {
				t.Errorf("message %q lacks %q", got.Message, w)
			}
		}
		if strings.Contains(got.Message, "node-11") {
			t.Errorf("message %q names a node whose agent is ready", got.Message)
		}
	})
	t.Run("all ready", func(t *testing.T) {
		f.kube.setDaemonSet(agents.Namespace, agents.Name, 4, 4)
		if got := f.check(); got.Status != StatusTrue || !strings.Contains(got.Message, "kube-system/cilium 4/4 available") {
			t.Fatalf("condition %+v", got)
		}
	})
	t.Run("bridge cluster", func(t *testing.T) {
		for _, w := range newAddonFixture(t, nil).deps {
			if w.Namespace == render.CiliumNamespace && strings.HasPrefix(w.Name, "cilium") {
				t.Errorf("a bridge cluster checks %s", w)
			}
		}
	})
}
