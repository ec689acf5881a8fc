package manifests

import (
	"reflect"
	"testing"
)

// The Deployments health checks read back are the ones the manifests
// render, with their pods' selector.
func TestDeploymentsOfRenderedManifests(t *testing.T) {
	dns, err := CoreDNS(DNS{ClusterIP: "10.96.0.10", ClusterDomain: "cluster.local", Replicas: 2})
	if err != nil {
		t.Fatal(err)
	}
	lp, err := LocalPathProvisioner(Provisioner{StorageClassName: "local-path"})
	if err != nil {
		t.Fatal(err)
	}
	rbac, err := BootstrapRBAC()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		manifest string
		want     []Workload
	}{
		{"coredns", dns, []Workload{{Kind: KindDeployment, Namespace: KubeDNSNamespace, Name: "coredns", MatchLabels: map[string]string{"k8s-app": "kube-dns"}, Replicas: 2}}},
		{"provisioner", lp, []Workload{{Kind: KindDeployment, Namespace: "local-path-storage", Name: "local-path-provisioner", MatchLabels: map[string]string{"app": "local-path-provisioner"}, Replicas: 1}}},
		{"no deployment", rbac, nil},
		{"no namespace, no replicas", "kind: Deployment\nmetadata:\n  name: x\n", []Workload{{Kind: KindDeployment, Namespace: "default", Name: "x", Replicas: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Deployments(tt.manifest)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Deployments = %+v, want %+v", got, tt.want)
			}
		})
	}
	if _, err := Deployments("kind: [unclosed"); err == nil {
		t.Error("Deployments of broken YAML: no error")
	}
}

// Workloads reads DaemonSets too, without a replica count; Deployments
// leaves them out.
func TestWorkloadsReadDaemonSets(t *testing.T) {
	const m = `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {k8s-app: agent}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: agent-config}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: operator}
spec:
  selector: {matchLabels: {app: operator}}
`
	got, err := Workloads(m)
	if err != nil {
		t.Fatal(err)
	}
	want := []Workload{
		{Kind: KindDaemonSet, Namespace: "kube-system", Name: "agent", MatchLabels: map[string]string{"k8s-app": "agent"}},
		{Kind: KindDeployment, Namespace: "default", Name: "operator", MatchLabels: map[string]string{"app": "operator"}, Replicas: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Workloads = %+v, want %+v", got, want)
	}
	deps, err := Deployments(m)
	if err != nil || len(deps) != 1 || deps[0].Name != "operator" {
		t.Fatalf("Deployments = %+v, %v", deps, err)
	}
}
