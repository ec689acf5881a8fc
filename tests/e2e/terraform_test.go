package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/manifest"
	"kcore.dev/kcore/tests/tofu"
)

// Bounds of the Terraform scenario.
const (
	// tofuWait is the wait_ready timeout of the configuration: how long
	// each tofu apply waits for ready, and tofu destroy for the cluster to
	// be gone.
	tofuWait = 6 * time.Minute
	// tofuCommandTimeout bounds one tofu command, its wait included.
	tofuCommandTimeout = tofuWait + 2*time.Minute
	// tofuBuildTimeout bounds building the provider.
	tofuBuildTimeout = 5 * time.Minute
)

// tofuEnv is a tofu working directory with the provider installed through
// a dev override and configured from the lab's kctl context.
type tofuEnv struct {
	*tofu.Dir
	t *testing.T
	l *lab
}

// newTofuEnv builds the provider and writes the CLI configuration that
// installs it (tofu.New); it skips without the tofu the Makefile builds.
func newTofuEnv(t *testing.T, l *lab) *tofuEnv {
	t.Helper()
	d := tofu.New(t, tofu.Options{Repo: l.repo, BuildTimeout: tofuBuildTimeout, CommandTimeout: tofuCommandTimeout})
	return &tofuEnv{Dir: d, t: t, l: l}
}

// clean fails the test unless tofu plans no change to a resource. The
// outputs may change: the kubeconfig data source issues a new certificate
// on every read.
func (e *tofuEnv) clean(when string) {
	e.t.Helper()
	e.Must("plan", "-out", "clean.plan")
	js := e.Output("show", "-json", "clean.plan")
	var p struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Mode    string `json:"mode"`
			Change  struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal(js, &p); err != nil {
		e.t.Fatalf("decode tofu show -json: %v\n%s", err, js)
	}
	planned := false
	for _, rc := range p.ResourceChanges {
		if rc.Mode != "managed" {
			continue
		}
		planned = planned || rc.Address == "kcore_kubernetes_cluster.lab"
		if !slices.Equal(rc.Change.Actions, []string{"no-op"}) {
			e.t.Fatalf("plan %s: %s %v, want no change\n%s", when, rc.Address, rc.Change.Actions, e.Must("show", "clean.plan"))
		}
	}
	if !planned {
		e.t.Fatalf("plan %s does not list kcore_kubernetes_cluster.lab:\n%s", when, js)
	}
}

// hcl quotes s as an HCL string.
func hcl(s string) string { return strconv.Quote(s) }

// nodeBlocks writes one block per node.
func nodeBlocks(b *strings.Builder, block string, nodes []api.ClusterNode) {
	for _, n := range nodes {
		fmt.Fprintf(b, "  %s {\n    node_id           = %s\n    advertise_address = %s\n    iface             = %s\n  }\n", block, hcl(n.NodeID), hcl(n.AdvertiseAddress), hcl(n.Iface))
	}
}

// write makes main.tf: the lab's cluster as scripts/lab.sh applies it
// (without its volumes) plus workers, as a kcore_kubernetes_cluster that
// waits for ready, with the cluster status and a kubeconfig read through
// the data sources. The registry mirrors' CA bundles go in files.
func (e *tofuEnv) write(kc *api.KubernetesCluster, workers []api.ClusterNode) {
	e.t.Helper()
	s := kc.Spec
	var b strings.Builder
	fmt.Fprintf(&b, `terraform {
  required_providers {
    kcore = { source = "kcore/kcore" }
  }
}

provider "kcore" {
  config_path = %s
}

resource "kcore_kubernetes_cluster" "lab" {
  name                      = %s
  cluster_cidr              = %s
  service_cidr              = %s
  cluster_dns               = %s
  api_server_endpoint       = %s
  cni                       = %s
  schedule_on_control_plane = %t
  wait_ready                = true
  timeout                   = %s

  high_availability {
    enabled       = %t
    vip_address   = %s
    vip_interface = %s
  }
`, hcl(filepath.Join(e.l.dir, "kctl.yaml")), hcl(kc.Metadata.Name), hcl(s.ClusterCIDR), hcl(s.ServiceCIDR), hcl(s.ClusterDNS),
		hcl(s.APIServerEndpoint), hcl(s.CNI), s.ScheduleOnControlPlane, hcl(tofuWait.String()),
		s.HighAvailability.Enabled, hcl(s.HighAvailability.VIPAddress), hcl(s.HighAvailability.VIPInterface))
	nodeBlocks(&b, "control_plane_node", s.ControlPlaneNodes)
	nodeBlocks(&b, "worker_node", workers)
	for i, m := range s.RegistryMirrors {
		quoted := make([]string, len(m.Endpoints))
		for j, ep := range m.Endpoints {
			quoted[j] = hcl(ep)
		}
		fmt.Fprintf(&b, "  registry_mirror {\n    registry  = %s\n    endpoints = [%s]\n", hcl(m.Registry), strings.Join(quoted, ", "))
		if m.CAPEM != "" {
			pem := fmt.Sprintf("mirror-%d.pem", i)
			if err := os.WriteFile(filepath.Join(e.Path, pem), []byte(m.CAPEM), 0o600); err != nil {
				e.t.Fatal(err)
			}
			fmt.Fprintf(&b, "    ca_pem    = file(\"${path.module}/%s\")\n", pem)
		}
		b.WriteString("  }\n")
	}
	b.WriteString(`}

data "kcore_cluster_status" "lab" {
  name       = kcore_kubernetes_cluster.lab.name
  depends_on = [kcore_kubernetes_cluster.lab]
}

data "kcore_kubeconfig" "lab" {
  cluster    = kcore_kubernetes_cluster.lab.name
  ttl        = "30m"
  depends_on = [kcore_kubernetes_cluster.lab]
}

output "phase" { value = data.kcore_cluster_status.lab.phase }
output "kubeconfig" {
  value     = data.kcore_kubeconfig.lab.kubeconfig
  sensitive = true
}
`)
	if err := os.WriteFile(filepath.Join(e.Path, "main.tf"), []byte(b.String()), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// readyThroughVIP checks the phase tofu read, then asks /readyz through
// the VIP with the kubeconfig the kcore_kubeconfig data source issued.
func (e *tofuEnv) readyThroughVIP() {
	e.t.Helper()
	if phase := strings.TrimSpace(e.Must("output", "-raw", "phase")); phase != api.PhaseReady {
		e.t.Fatalf("kcore_cluster_status says %q after apply, want %s", phase, api.PhaseReady)
	}
	file := filepath.Join(e.Path, "kubeconfig")
	if err := os.WriteFile(file, []byte(e.Must("output", "-raw", "kubeconfig")), 0o600); err != nil {
		e.t.Fatal(err)
	}
	eventually(e.t, "/readyz through the VIP with the kubeconfig from tofu", 30*time.Second, func() error {
		out, err := run(15*time.Second, nil, filepath.Join(e.l.k8sBin, "kubectl"), "--kubeconfig", file, "--request-timeout=5s", "get", "--raw", "/readyz")
		if err == nil && strings.TrimSpace(out) != "ok" {
			err = fmt.Errorf("/readyz answered %q", out)
		}
		return err
	})
}

// timedTofu runs a tofu command that must succeed and logs how long it took.
func (e *tofuEnv) timedTofu(what string, args ...string) string {
	e.t.Helper()
	start := time.Now()
	out := e.Must(args...)
	e.t.Logf("%s: %s", what, time.Since(start).Round(100*time.Millisecond))
	return out
}

// testTerraform: on the machines the delete freed, tofu apply creates the
// lab's cluster through the provider (configured from the lab's kctl
// context) and waits for ready; /readyz answers through the VIP with the
// kubeconfig the data source issued and the next plan is clean. A second
// apply adds the spare namespace as a worker: the plan names the node, the
// cluster is ready again with four Ready nodes. tofu destroy tears it
// down: the controller no longer stores it and no unit is left on any
// node.
func testTerraform(t *testing.T, l *lab) {
	e := newTofuEnv(t, l)
	docs, diags := manifest.ReadPath(l.manifestFile())
	if diags.HasErrors() || len(docs) != 1 {
		t.Fatalf("read the lab manifest: %d documents, %v", len(docs), diags)
	}
	kc, ok := docs[0].Object.(*api.KubernetesCluster)
	if !ok {
		t.Fatalf("the lab manifest holds a %T, not a cluster", docs[0].Object)
	}
	if out, err := l.kctl(30*time.Second, "kubernetes", "list"); err != nil || strings.Contains(out, cluster+" ") {
		t.Fatalf("the machines are not free (this step runs after delete): kctl kubernetes list: %v\n%s", err, out)
	}

	e.write(kc, nil)
	out := e.Must("plan")
	for _, want := range []string{"kcore_kubernetes_cluster.lab will be created", "create cluster " + cluster} {
		if !strings.Contains(out, want) {
			t.Fatalf("the create plan does not say %q:\n%s", want, out)
		}
	}
	e.timedTofu("tofu apply: created and ready", "apply", "-auto-approve")
	e.readyThroughVIP()
	eventually(t, "kctl kubernetes health after the create", fieldReadyTimeout, l.healthy)
	eventually(t, "three nodes Ready", 2*time.Minute, func() error { return l.nodesReady("lab-n1", "lab-n2", "lab-n3") })
	e.clean("after the create")

	worker := []api.ClusterNode{{NodeID: spareNode, AdvertiseAddress: spareAddr, Iface: "eth0"}}
	e.write(kc, worker)
	out = e.Must("plan")
	for _, want := range []string{"update in-place", "node " + spareNode, "worker_node"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the plan adding %s does not say %q:\n%s", spareNode, want, out)
		}
	}
	e.timedTofu("tofu apply: worker "+spareNode+" added and ready", "apply", "-auto-approve")
	e.readyThroughVIP()
	eventually(t, "four nodes Ready", 2*time.Minute, func() error { return l.nodesReady("lab-n1", "lab-n2", "lab-n3", spareNode) })
	e.clean("after adding the worker")

	e.timedTofu("tofu destroy: gone", "destroy", "-auto-approve")
	if out, err := l.kctl(30*time.Second, "kubernetes", "list"); err != nil || strings.Contains(out, cluster+" ") {
		t.Errorf("kctl kubernetes list after tofu destroy: %v\n%s", err, out)
	}
	for _, n := range append(labNodes(), labNodeN(4)) {
		s, err := l.units(n.name)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Units) != 0 {
			t.Errorf("%s: units left after tofu destroy: %v", n.id, s.Units)
		}
	}
	if left := strings.TrimSpace(e.Must("state", "list")); left != "" {
		t.Errorf("tofu state after destroy still lists:\n%s", left)
	}
}
