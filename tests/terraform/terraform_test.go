package terraform

import (
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// cluster is a kcore_kubernetes_cluster block for the test nodes, written
// as an HCL manifest would be; extra goes inside the block.
func cluster(name, extra string) string {
	return `
resource "kcore_kubernetes_cluster" "` + name + `" {
  name                      = "` + name + `"
  cluster_cidr              = "10.245.0.0/16"
  service_cidr              = "10.97.0.0/16"
  cluster_dns               = "10.97.0.10"
  api_server_endpoint       = "192.168.41.201:6443"
  schedule_on_control_plane = true
  purge_volumes             = true

  control_plane_node {
    node_id           = "node-201"
    advertise_address = "192.168.41.201"
  }
` + extra + `}
`
}

const apiArgs = `
  api_server {
    extra_args = { "audit-log-maxage" = "30" }
  }
`

const worker = `
  worker_node {
    node_id           = "node-202"
    advertise_address = "192.168.41.202"
  }
`

// dataBlocks read the nodes and the cluster's status through the data sources.
const dataBlocks = `
data "kcore_nodes" "all" {}

data "kcore_cluster_status" "lab" {
  name       = kcore_kubernetes_cluster.lab.name
  depends_on = [kcore_kubernetes_cluster.lab]
}

output "nodes" { value = join(",", [for n in data.kcore_nodes.all.nodes : n.name]) }
output "phase" { value = data.kcore_cluster_status.lab.phase }
`

// mustContain fails unless out holds every want.
func mustContain(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("%s does not say %q:\n%s", what, w, out)
		}
	}
}

// TestLifecycle drives one cluster through tofu: create, update with the
// steps per node in the plan, a blocked change refused at plan on its
// attribute, a saved plan made stale, drift, import and destroy.
func TestLifecycle(t *testing.T) {
	e := newEnv(t)
	e.putNode("node-201", "192.168.41.201")
	e.putNode("node-202", "192.168.41.202")

	// Create: the plan shows the defaults the controller fills in.
	e.write(cluster("lab", ""))
	out := e.Must("plan")
	mustContain(t, "create plan", out, `kcore_kubernetes_cluster.lab will be created`, `cni`, `"cilium"`, `create cluster lab`)
	e.Must("apply", "-auto-approve")
	e.write(cluster("lab", "") + dataBlocks)
	e.Must("apply", "-auto-approve")
	mustContain(t, "outputs", e.Must("output"), `nodes = "node-201,node-202"`, `phase = "bootstrapping"`)
	kc, ok := e.stored("lab")
	if !ok || kc.Spec.ClusterCIDR != "10.245.0.0/16" || kc.Status.Phase != api.PhaseBootstrapping {
		t.Fatalf("after create the controller stores %+v (stored %v)", kc, ok)
	}
	if out, code := e.Run("plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan right after create: exit %d, want 0 (no changes)\n%s", code, out)
	}
	// Without agents the orchestrator-less controller never marks it
	// ready; do so, as a change waits for that.
	e.markReady("lab")

	// Update: a kube-apiserver flag; the plan lists the steps per node.
	e.write(cluster("lab", apiArgs))
	out = e.Must("plan")
	mustContain(t, "update plan", out, "update in-place", "update cluster lab", "node node-201")
	e.Must("apply", "-auto-approve")
	if kc, _ = e.stored("lab"); kc.Spec.APIServer.ExtraArgs["audit-log-maxage"] != "30" {
		t.Fatalf("after update the controller stores %+v", kc.Spec.APIServer)
	}
	e.markReady("lab")

	// Blocked: a worker added together with another change (the flag
	// dropped; a membership change alone would plan as a scale) fails at
	// plan, on its block.
	e.write(cluster("lab", worker))
	out, code := e.Run("plan")
	if code == 0 {
		t.Fatalf("plan of a membership change succeeded:\n%s", out)
	}
	mustContain(t, "blocked plan", out, "Error: kcore plan: membership-change", "worker_node[0]")
	if kc, _ = e.stored("lab"); len(kc.Spec.WorkerNodes) != 0 {
		t.Fatalf("a blocked plan changed the stored workers: %+v", kc.Spec.WorkerNodes)
	}

	// Stale: a saved plan is refused once the cluster changed after it.
	e.write(cluster("lab", ""))
	e.Must("plan", "-out", "saved.plan")
	changed := kc
	changed.Metadata.Labels = map[string]string{"team": "ops"}
	e.applyDirect(changed)
	e.markReady("lab")
	out, code = e.Run("apply", "saved.plan")
	if code == 0 {
		t.Fatalf("a stale saved plan was applied:\n%s", out)
	}
	// tofu plans again while applying a saved plan, sees the controller's
	// plan (plan_ref) changed and refuses; the controller's own stale-plan
	// refusal stands behind it.
	if !strings.Contains(out, "stale plan") && !strings.Contains(out, ".plan_ref: was") {
		t.Fatalf("a stale saved plan failed for another reason:\n%s", out)
	}
	if kc, _ = e.stored("lab"); kc.Spec.APIServer.ExtraArgs["audit-log-maxage"] != "30" {
		t.Fatalf("a stale saved plan changed the cluster: %+v", kc.Spec.APIServer)
	}

	// Drift: the label set outside tofu shows in the next plan.
	e.write(cluster("lab", apiArgs))
	out, code = e.Run("plan", "-detailed-exitcode")
	if code != 2 {
		t.Fatalf("plan after drift: exit %d, want 2 (changes)\n%s", code, out)
	}
	mustContain(t, "drift plan", out, `"team" = "ops"`)
	e.Must("apply", "-auto-approve")
	if kc, _ = e.stored("lab"); len(kc.Metadata.Labels) != 0 {
		t.Fatalf("apply did not undo the drift: labels %v", kc.Metadata.Labels)
	}

	// Import: a cluster stored by kctl is adopted, and its configuration
	// then plans no change.
	other := kc
	other.Metadata = api.ObjectMeta{Name: "other"}
	other.Spec.ClusterCIDR, other.Spec.ServiceCIDR, other.Spec.ClusterDNS = "10.246.0.0/16", "10.98.0.0/16", "10.98.0.10"
	other.Spec.WorkerNodes = nil
	other.Spec.APIServerEndpoint = "192.168.41.203:6443"
	other.Spec.ControlPlaneNodes = []api.ClusterNode{{NodeID: "node-203", AdvertiseAddress: "192.168.41.203"}}
	other.Status = api.ClusterStatus{}
	e.putNode("node-203", "192.168.41.203")
	e.applyDirect(other)
	otherCfg := strings.NewReplacer(`"lab"`, `"other"`, "10.245.0.0/16", "10.246.0.0/16", "10.97.0.0/16", "10.98.0.0/16",
		"10.97.0.10", "10.98.0.10", "node-201", "node-203", "192.168.41.201", "192.168.41.203",
		"  purge_volumes             = true\n", "").Replace(cluster("lab", apiArgs))
	e.write(cluster("lab", apiArgs) + otherCfg)
	e.Must("import", "kcore_kubernetes_cluster.other", "other")
	show := e.Must("state", "show", "kcore_kubernetes_cluster.other")
	mustContain(t, "imported state", show, `cluster_cidr`, `"10.246.0.0/16"`, `node-203`)
	e.markReady("other")
	if out, code := e.Run("plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan after import: exit %d, want 0 (no changes)\n%s", code, out)
	}

	// Destroy: each cluster is deleted the way kctl kubernetes delete does;
	// without agents the orchestrator-less controller keeps it deleting.
	e.Must("destroy", "-auto-approve")
	for _, name := range []string{"lab", "other"} {
		kc, ok := e.stored(name)
		if ok && kc.Status.Phase != api.PhaseDeleting {
			t.Fatalf("after destroy %s is %s, want deleting or gone", name, kc.Status.Phase)
		}
	}
}
