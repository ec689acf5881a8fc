package render

import (
	"fmt"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
)

// addons renders, on the bootstrap control plane, the bootstrap RBAC and
// CoreDNS (serving clusterDns) and the task that applies them.
func (r *renderer) addons(b *builder) error {
	rbac, err := manifests.BootstrapRBAC()
	if err != nil {
		return fmt.Errorf("render addons: %w", err)
	}
	replicas := 2
	if len(r.c.Spec.Members()) < 2 {
		replicas = 1
	}
	dns, err := manifests.CoreDNS(manifests.DNS{ClusterIP: r.c.Spec.ClusterDNS, ClusterDomain: r.opts.ClusterDomain, Replicas: replicas})
	if err != nil {
		return fmt.Errorf("render addons: %w", err)
	}
	b.file(RBACPath, modeConfig, rbac, false, "bootstrap RBAC of the API server and the nodes")
	b.file(CoreDNSPath, modeConfig, dns, false, "CoreDNS add-on, Service kube-system/kube-dns at cluster IP "+r.c.Spec.ClusterDNS)
	b.task(api.Task{Name: TaskAddons, Argv: r.kubectlApply(RBACPath, CoreDNSPath), After: []string{UnitAPIServer}, Reason: "kubectl apply the RBAC and CoreDNS add-ons"},
		RBACPath, CoreDNSPath, AdminKubeconfigPath)
	return nil
}
