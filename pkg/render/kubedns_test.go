package render

import (
	"slices"
	"strings"
	"testing"
)

// A new clusterDns cannot be patched into the kube-dns Service (the API
// server refuses to change spec.clusterIPs): the Service's task applies it
// with --force, which deletes and creates again exactly the objects whose
// patch is refused, and it re-runs whenever the Service's manifest changes,
// while the add-ons' server-side apply (which has no --force) does not
// carry the Service and does not re-run. No task deletes the Service.
func TestClusterDNSChangeReplacesTheKubeDNSService(t *testing.T) {
	c := loadCluster(t, "lab")
	secrets, facts := fakeSecrets(c), testFacts()
	before, err := Render(c, secrets, facts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.ClusterDNS = "10.96.0.53"
	after, err := Render(c, secrets, facts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	boot := "node-105"
	apply := taskByName(after[boot], TaskKubeDNS)
	if apply == nil {
		t.Fatalf("no %s task on the bootstrap control plane", TaskKubeDNS)
	}
	want := []string{"kubectl", "--kubeconfig=" + AdminKubeconfigPath, "--server=https://127.0.0.1:6443", "apply", "--force", "--validate=false", "-f", KubeDNSServicePath}
	if !slices.Equal(apply.Argv, want) {
		t.Errorf("kube-dns Service argv = %q, want %q", apply.Argv, want)
	}
	if !slices.Equal(apply.After, []string{UnitAPIServer}) {
		t.Errorf("the kube-dns Service task waits for %q, want only the API server", apply.After)
	}
	if taskByName(before[boot], TaskKubeDNS).InputHash == apply.InputHash {
		t.Error("the kube-dns Service task does not re-run when clusterDns changes")
	}
	addons := taskByName(after[boot], TaskAddons)
	if slices.Contains(addons.Argv, KubeDNSServicePath) {
		t.Errorf("the add-ons' server-side apply carries the Service: %q", addons.Argv)
	}
	if taskByName(before[boot], TaskAddons).InputHash != addons.InputHash {
		t.Error("the add-ons task re-runs when only clusterDns changes")
	}
	for _, ns := range after {
		for _, task := range ns.Tasks {
			if slices.Contains(task.Argv, "delete") {
				t.Errorf("task %s on %s deletes: %q", task.Name, ns.NodeID, task.Argv)
			}
		}
	}
	svc := fileByPath(after[boot], KubeDNSServicePath)
	if svc == nil || !strings.Contains(svc.Content, "clusterIP: 10.96.0.53") || !strings.Contains(svc.Content, "name: kube-dns") {
		t.Fatalf("kube-dns Service manifest = %+v", svc)
	}
	if dns := fileByPath(after[boot], CoreDNSPath); strings.Contains(dns.Content, "kind: Service\n") {
		t.Error("coredns.yaml still holds the Service: the plan reads its cluster IP from a file of its own")
	}
}
