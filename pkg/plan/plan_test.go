package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

func TestHashIsDeterministic(t *testing.T) {
	in := func() Input {
		return Input{Desired: clusters(labCluster()), Nodes: labNodes(), Index: 7}
	}
	a, b := Compute(in()), Compute(in())
	if a.Hash != b.Hash || a.Hash == "" {
		t.Fatalf("same input, hashes %q and %q", a.Hash, b.Hash)
	}
	reordered := in()
	slices.Reverse(reordered.Nodes)
	if got := Compute(reordered).Hash; got != a.Hash {
		t.Errorf("node order changed the hash: %s, want %s", got, a.Hash)
	}
	for name, edit := range map[string]func(*Input){
		"one field":   func(in *Input) { in.Desired[0].Spec.LocalProvisioner.Volumes[2].SizeBytes += gib },
		"index":       func(in *Input) { in.Index++ },
		"label":       func(in *Input) { in.Desired[0].Metadata.Labels = map[string]string{"team": "infra"} },
		"cilium pool": func(in *Input) { in.Desired[0].Spec.Cilium.LoadBalancerIPPools = []string{"192.168.40.224/29"} },
	} {
		changed := in()
		edit(&changed)
		if got := Compute(changed).Hash; got == a.Hash {
			t.Errorf("%s changed, hash stayed %s", name, got)
		}
	}
}

func TestDesiredOrderDoesNotMatter(t *testing.T) {
	other := with(labCluster(), func(c *api.KubernetesCluster) {
		c.Metadata.Name = "alpha"
		c.Spec.CNI = "bridge"
		c.Spec.APIServerEndpoint = "192.168.40.201:7443"
		c.Spec.HighAvailability.VIPAddress = "192.168.40.201"
		c.Spec.Cilium = api.CiliumSpec{}
		c.Spec.LocalProvisioner = api.LocalProvisionerSpec{}
	})
	a := Compute(Input{Desired: clusters(labCluster(), other), Nodes: labNodes()})
	b := Compute(Input{Desired: clusters(other, labCluster()), Nodes: labNodes()})
	if a.Hash != b.Hash {
		t.Errorf("manifest order changed the hash")
	}
	if len(a.Clusters) != 2 || a.Clusters[0].Name != "alpha" || a.Clusters[1].Name != "lab" {
		t.Errorf("clusters not sorted by name: %+v", a.Clusters)
	}
	if a.Blocked() {
		t.Errorf("blocked: %+v", a.Blocking)
	}
}

func TestComputeDoesNotModifyItsInput(t *testing.T) {
	in := Input{
		Desired: clusters(with(labCluster(), func(c *api.KubernetesCluster) { c.Spec.ClusterDNS = "" })),
		Stored:  clusters(stored(labCluster(), api.PhaseReady)),
		Nodes:   labNodes(),
	}
	before, _ := json.Marshal(in)
	Compute(in)
	after, _ := json.Marshal(in)
	if !bytes.Equal(before, after) {
		t.Errorf("Compute changed its input:\n%s\n%s", before, after)
	}
}

func TestNoOpHasNoChanges(t *testing.T) {
	p := Compute(Input{Desired: clusters(labCluster()), Stored: clusters(stored(labCluster(), api.PhaseReady)), Nodes: labNodes()})
	if p.Changes() || p.Blocked() || len(p.Clusters[0].Steps) != 0 || p.Clusters[0].Desired != nil {
		t.Errorf("unchanged manifest: %+v", p)
	}
	// A defaulted manifest is the same as one that spells the defaults out.
	bare := with(labCluster(), func(c *api.KubernetesCluster) {
		c.Spec.CNI, c.Spec.ClusterDNS = "", ""
		c.Spec.Cilium = api.CiliumSpec{LoadBalancerIPPools: c.Spec.Cilium.LoadBalancerIPPools}
		for i := range c.Spec.LocalProvisioner.Volumes {
			c.Spec.LocalProvisioner.Volumes[i].FSType = ""
			c.Spec.LocalProvisioner.Volumes[i].Role = ""
		}
	})
	if p := Compute(Input{Desired: clusters(bare), Stored: clusters(stored(labCluster(), api.PhaseReady)), Nodes: labNodes()}); p.Changes() {
		t.Errorf("defaults spelled out or not differ: %+v", p.Clusters[0].Diff)
	}
}

// stepKey is the part of a step derived from the rendered diff.
type stepKey struct{ node, component, action, disruption string }

func TestUpdateSteps(t *testing.T) {
	cps := []string{"node-105", "node-107"}
	all := []string{"node-105", "node-107", "node-103"}
	on := func(nodes []string, component, action, disruption string) []stepKey {
		var out []stepKey
		for _, n := range nodes {
			out = append(out, stepKey{n, component, action, disruption})
		}
		return out
	}
	tests := []struct {
		name string
		edit func(*api.KubernetesCluster)
		want []stepKey
	}{
		{"cluster DNS restarts kubelet everywhere and replaces the kube-dns Service", func(c *api.KubernetesCluster) { c.Spec.ClusterDNS = "10.96.0.11" },
			append(on(all, ComponentKubelet, StepRestart, DisruptionRestartUnit), on(cps[:1], ComponentAddons, StepReplace, DisruptionNone)...)},
		{"scheduling on control planes changes kubelet's registration flags", func(c *api.KubernetesCluster) { c.Spec.ScheduleOnControlPlane = false },
			on(cps, ComponentKubelet, StepRestart, DisruptionRestartUnit)},
		{"cilium MTU runs the cilium unit again", func(c *api.KubernetesCluster) { c.Spec.Cilium.MTU = 9000 },
			on(cps[:1], ComponentCilium, StepRestart, DisruptionRestartUnit)},
		{"another pool re-applies the L2 manifest", func(c *api.KubernetesCluster) {
			c.Spec.Cilium.LoadBalancerIPPools = append(c.Spec.Cilium.LoadBalancerIPPools, "192.168.40.232/29")
		}, on(cps[:1], ComponentCilium, StepApply, DisruptionNone)},
		{"dropping every pool runs the cilium unit again", func(c *api.KubernetesCluster) { c.Spec.Cilium.LoadBalancerIPPools = nil },
			on(cps[:1], ComponentCilium, StepRestart, DisruptionRestartUnit)},
		{"health check restarts keepalived, which may move the VIP", func(c *api.KubernetesCluster) { c.Spec.HighAvailability.HealthCheck = ptrTo(false) },
			on(cps, ComponentKeepalived, StepRestart, DisruptionVIPMove)},
		{"VIP interface moves the VIP", func(c *api.KubernetesCluster) { c.Spec.HighAvailability.VIPInterface = "lo" },
			on(cps, ComponentKeepalived, StepRestart, DisruptionVIPMove)},
		{"a new volume is created and served", func(c *api.KubernetesCluster) {
			c.Spec.LocalProvisioner.Volumes = append(c.Spec.LocalProvisioner.Volumes, api.VolumeSpec{Name: "logs", NodeID: "node-103", StorageClass: "lvm", SizeBytes: 10 * gib})
		}, []stepKey{{"node-103", "volume:logs", StepCreate, DisruptionNone}, {"node-105", ComponentProvisioner, StepApply, DisruptionNone}}},
		{"a mount path change remounts", func(c *api.KubernetesCluster) { c.Spec.LocalProvisioner.Volumes[2].MountPath = "/srv/kdata" },
			[]stepKey{{"node-103", "volume:kcore-kdata", StepRemount, DisruptionRestartUnit}, {"node-105", ComponentProvisioner, StepApply, DisruptionNone}}},
		{"labels restart nothing", func(c *api.KubernetesCluster) { c.Metadata.Labels = map[string]string{"team": "infra"} }, nil},
		{"API server flags restart kube-apiserver on each control plane in order", func(c *api.KubernetesCluster) {
			c.Spec.APIServer.ExtraArgs = map[string]string{"event-ttl": "2h", "audit-log-maxage": "30"}
		}, on(cps, ComponentAPIServer, StepRestart, DisruptionRestartUnit)},
		{"controller-manager and scheduler flags restart them", func(c *api.KubernetesCluster) {
			c.Spec.ControllerManager.ExtraArgs = map[string]string{"v": "2"}
			c.Spec.Scheduler.ExtraArgs = map[string]string{"v": "2"}
		}, slices.Concat(
			[]stepKey{{"node-105", ComponentControllerManager, StepRestart, DisruptionRestartUnit}, {"node-105", ComponentScheduler, StepRestart, DisruptionRestartUnit}},
			[]stepKey{{"node-107", ComponentControllerManager, StepRestart, DisruptionRestartUnit}, {"node-107", ComponentScheduler, StepRestart, DisruptionRestartUnit}})},
		{"kubelet flags restart kubelet everywhere", func(c *api.KubernetesCluster) {
			c.Spec.Kubelet.ExtraArgs = map[string]string{"node-labels": "tier=edge"}
		},
			on(all, ComponentKubelet, StepRestart, DisruptionRestartUnit)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(Input{Desired: clusters(with(labCluster(), tc.edit)), Stored: clusters(stored(labCluster(), api.PhaseReady)), Nodes: labNodes()})
			if p.Blocked() {
				t.Fatalf("blocked: %+v", p.Blocking)
			}
			if p.Clusters[0].Action != ActionUpdate || len(p.Clusters[0].Diff) == 0 {
				t.Fatalf("cluster plan = %+v, want an update with a diff", p.Clusters[0])
			}
			var got []stepKey
			for _, s := range p.Clusters[0].Steps {
				got = append(got, stepKey{s.Node, s.Component, s.Action, s.Disruption})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("steps = %v\nwant    %v", got, tc.want)
			}
		})
	}
}

func TestReadRefusesUnknownVersions(t *testing.T) {
	var buf bytes.Buffer
	p := Compute(Input{Desired: clusters(labCluster()), Nodes: labNodes(), Index: 7})
	if err := Write(&buf, p); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	tests := []struct {
		name string
		data string
		want error
	}{
		{"newer version", strings.Replace(good, `"version": 1`, `"version": 2`, 1), ErrUnsupportedVersion},
		{"no version", `{"index": 7, "clusters": []}`, ErrUnsupportedVersion},
		{"edited content", strings.Replace(good, `"index": 7`, `"index": 8`, 1), ErrHashMismatch},
		{"edited step", strings.Replace(good, `"disruption": "none"`, `"disruption": "drain"`, 1), ErrHashMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Read(strings.NewReader(tc.data)); !errors.Is(err, tc.want) {
				t.Errorf("Read = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := Read(strings.NewReader("not json")); err == nil {
		t.Error("Read accepted garbage")
	}
	back, err := Read(strings.NewReader(good))
	if err != nil || back.Hash != p.Hash || !back.Changes() {
		t.Errorf("Read(good) = %+v, %v", back, err)
	}
}

func TestWriteTextColour(t *testing.T) {
	in := Input{Desired: clusters(labCluster()), Nodes: without(labNodes(), "node-107")}
	var plain, colour bytes.Buffer
	if err := WriteText(&plain, Compute(in), false); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&colour, Compute(in), true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("colour off, output has ANSI escapes")
	}
	if !strings.Contains(colour.String(), "\x1b[1m\x1b[31m✗ BLOCKED") {
		t.Errorf("colour on, no red BLOCKED header:\n%s", colour.String())
	}
	if !strings.HasPrefix(plain.String(), "✗ BLOCKED") {
		t.Errorf("blocking issues do not come first:\n%s", plain.String())
	}
}

func TestWriteTextReportsWriteErrors(t *testing.T) {
	p := Compute(Input{Desired: clusters(labCluster()), Nodes: labNodes()})
	if err := WriteText(failingWriter{}, p, false); !errors.Is(err, errWrite) {
		t.Errorf("WriteText = %v, want the writer's error", err)
	}
}

var errWrite = errors.New("disk full")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KiB", 53687091200: "50 GiB", 1610612736: "1.5 GiB", 500 * gib: "500 GiB", 2 << 40: "2 TiB",
	} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
