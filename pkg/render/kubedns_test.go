package render

import (
	"slices"
	"strings"
	"testing"
)

// A new clusterDns cannot be patched into the kube-dns Service (the API
// server refuses to change spec.clusterIPs): the Service is deleted by a
// task that re-runs exactly when its manifest changes, and the add-ons
// task, ordered after it, creates it with the new cluster IP.
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
	old, cur := taskByName(before[boot], TaskKubeDNSReplace), taskByName(after[boot], TaskKubeDNSReplace)
	if old == nil || cur == nil {
		t.Fatalf("no %s task on the bootstrap control plane", TaskKubeDNSReplace)
	}
	want := []string{"kubectl", "--kubeconfig=" + AdminKubeconfigPath, "--server=https://127.0.0.1:6443", "delete", "--ignore-not-found", "--wait=true", "-f", KubeDNSServicePath}
	if !slices.Equal(cur.Argv, want) {
		t.Errorf("replace argv = %q, want %q", cur.Argv, want)
	}
	if old.InputHash == cur.InputHash {
		t.Error("the delete task does not re-run when clusterDns changes")
	}
	apply := taskByName(after[boot], TaskAddons)
	if !slices.Contains(apply.After, TaskKubeDNSReplace) || !slices.Contains(apply.Argv, KubeDNSServicePath) {
		t.Errorf("the add-ons task must create the Service after the delete: after %q argv %q", apply.After, apply.Argv)
	}
	if taskByName(before[boot], TaskAddons).InputHash == apply.InputHash {
		t.Error("the add-ons task does not re-run when clusterDns changes")
	}
	svc := fileByPath(after[boot], KubeDNSServicePath)
	if svc == nil || !strings.Contains(svc.Content, "clusterIP: 10.96.0.53") || !strings.Contains(svc.Content, "name: kube-dns") {
		t.Fatalf("kube-dns Service manifest = %+v", svc)
	}
	if dns := fileByPath(after[boot], CoreDNSPath); strings.Contains(dns.Content, "kind: Service\n") {
		t.Error("coredns.yaml still holds the Service: kubectl apply would try to patch its cluster IP")
	}

	// Renewing the admin credentials re-applies the add-ons but must not
	// delete the Service.
	c.Spec.ClusterDNS = "10.96.0.10"
	secrets.ControlPlanes[boot].Admin.CertPEM = append([]byte(nil), secrets.ControlPlanes["node-107"].Admin.CertPEM...)
	renewed, err := Render(c, secrets, facts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if taskByName(renewed[boot], TaskKubeDNSReplace).InputHash != old.InputHash {
		t.Error("new admin credentials re-run the Service delete")
	}
}
