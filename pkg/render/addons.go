package render

import (
	"fmt"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
)

// addons renders, on the bootstrap control plane, the bootstrap RBAC,
// CoreDNS and the kube-dns Service (serving clusterDns), and the two tasks
// that apply them, started together once the API server is healthy. The
// RBAC and CoreDNS go through kubectlApply (server-side apply). A
// Service's cluster IP cannot be patched (the API server refuses
// "spec.clusterIPs[0]: may not change once set") and server-side apply has
// no way around that, so the Service has a task of its own, kubectl apply
// --force: where its patch is refused as invalid, kubectl deletes the
// Service, waits until it is gone and creates it from the file, and
// creates the old one again if the new one is refused. The task re-runs
// only when the Service's file changes.
func (r *renderer) addons(b *builder) error {
	rbac, err := manifests.BootstrapRBAC()
	if err != nil {
		return fmt.Errorf("render addons: %w", err)
	}
	replicas := r.spreadReplicas()
	d := manifests.DNS{ClusterIP: r.c.Spec.ClusterDNS, ClusterDomain: r.opts.ClusterDomain, Replicas: replicas}
	dns, err := manifests.CoreDNS(d)
	if err != nil {
		return fmt.Errorf("render addons: %w", err)
	}
	svc, err := manifests.CoreDNSService(d)
	if err != nil {
		return fmt.Errorf("render addons: %w", err)
	}
	object := "Service " + manifests.KubeDNSNamespace + "/" + manifests.KubeDNSService
	b.file(r.l.RBAC, modeConfig, rbac, false, "bootstrap RBAC of the API server and the nodes")
	b.file(r.l.CoreDNS, modeConfig, dns, false, fmt.Sprintf("CoreDNS add-on, %d replicas, domain %s", replicas, r.opts.ClusterDomain))
	b.file(r.l.KubeDNSService, modeConfig, svc, false, object+", cluster IP "+r.c.Spec.ClusterDNS)
	b.task(api.Task{
		Name:   r.l.TaskAddons,
		Argv:   r.kubectlApply(r.l.RBAC, r.l.CoreDNS),
		After:  []string{r.l.UnitAPIServer},
		Reason: "kubectl apply the RBAC and CoreDNS" + serverSideReason,
	}, r.l.RBAC, r.l.CoreDNS, r.l.AdminKubeconfig)
	b.task(api.Task{
		Name:   r.l.TaskKubeDNS,
		Argv:   r.kubectl("apply", "--force", noSchemaCheck, "-f", r.l.KubeDNSService),
		After:  []string{r.l.UnitAPIServer},
		Reason: "kubectl apply " + object + " (--force: a new cluster IP cannot be patched in place, so the Service is deleted and created again)",
	}, r.l.KubeDNSService, r.l.AdminKubeconfig)
	return nil
}

// spreadReplicas is how many replicas an add-on that keeps its replicas on
// different nodes runs (CoreDNS, Cilium's operator): two, or one on a
// cluster of one member, where a second could never schedule.
func (r *renderer) spreadReplicas() int {
	return min(2, len(r.c.Spec.Members()))
}

// AddonManifests are the files of the layout's cluster whose manifests run
// its add-on workloads: CoreDNS and, when rendered, the local-path
// provisioner. Health checks read the Deployments they create from the
// rendered files (manifests.Deployments), so a disabled add-on, whose file
// is not rendered, is not checked.
func (l Layout) AddonManifests() []string {
	return []string{l.CoreDNS, l.Provisioner}
}
