package manifest

import (
	"maps"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// TestExtraArgsYAMLAndHCL: spec.*.extraArgs read from YAML (camelCase) and
// HCL (api_server { extra_args = { … } }) give the same cluster, and a flag
// kcore owns is reported at the line of its key, naming field and flag.
func TestExtraArgsYAMLAndHCL(t *testing.T) {
	y := yamlCluster + `  apiServer:
    extraArgs:
      audit-log-maxage: "30"
      etcd-servers: https://elsewhere:2379
  kubelet:
    extraArgs:
      node-labels: tier=edge
`
	h := strings.TrimSuffix(hclCluster, "}\n") + `  api_server {
    extra_args = {
      "audit-log-maxage" = 30
      etcd-servers       = "https://elsewhere:2379"
    }
  }
  kubelet {
    extra_args = { node-labels = "tier=edge" }
  }
}
`
	ydocs, ds := ParseYAML("cluster.yaml", []byte(y))
	if len(ds) != 0 {
		t.Fatalf("yaml:\n%s", diagStrings(ds))
	}
	hdocs, ds := ParseHCL("cluster.hcl", []byte(h))
	if len(ds) != 0 {
		t.Fatalf("hcl:\n%s", diagStrings(ds))
	}
	want := map[string]string{"audit-log-maxage": "30", "etcd-servers": "https://elsewhere:2379"}
	for _, d := range []*Document{ydocs[0], hdocs[0]} {
		c := d.Object.(*api.KubernetesCluster)
		if !maps.Equal(c.Spec.APIServer.ExtraArgs, want) || !maps.Equal(c.Spec.Kubelet.ExtraArgs, map[string]string{"node-labels": "tier=edge"}) {
			t.Errorf("%s: apiServer %v kubelet %v", d.Format, c.Spec.APIServer.ExtraArgs, c.Spec.Kubelet.ExtraArgs)
		}
	}
	msg := ": set by kcore (kube-apiserver --etcd-servers=…)"
	if got := diagStrings(Check(ydocs)); !strings.HasPrefix(got, "cluster.yaml:15: spec.apiServer.extraArgs.etcd-servers"+msg) {
		t.Errorf("yaml check: %s", got)
	}
	if got := diagStrings(Check(hdocs)); !strings.HasPrefix(got, "cluster.hcl:13:7: api_server.extra_args.etcd-servers"+msg) {
		t.Errorf("hcl check: %s", got)
	}
}
