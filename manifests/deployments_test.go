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
		want     []Deployment
	}{
		{"coredns", dns, []Deployment{{Namespace: KubeDNSNamespace, Name: "coredns", MatchLabels: map[string]string{"k8s-app": "kube-dns"}, Replicas: 2}}},
		{"provisioner", lp, []Deployment{{Namespace: "local-path-storage", Name: "local-path-provisioner", MatchLabels: map[string]string{"app": "local-path-provisioner"}, Replicas: 1}}},
		{"no deployment", rbac, nil},
		{"no namespace, no replicas", "kind: Deployment\nmetadata:\n  name: x\n", []Deployment{{Namespace: "default", Name: "x", Replicas: 1}}},
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
