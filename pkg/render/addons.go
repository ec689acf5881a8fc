package render

import (
	"fmt"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
)

// addons renders, on the bootstrap control plane, the bootstrap RBAC,
// CoreDNS and the kube-dns Service (serving clusterDns), and the task that
// applies them. A Service's cluster IP cannot be patched (the API server
// refuses "spec.clusterIPs[0]: may not change once set"), so the task is
// kubectl apply --force: where a patch is refused as invalid (or conflicts
// past kubectl's retries), kubectl deletes that object, waits until it is
// gone and creates it from the file, and creates the old one again if the
// new one is refused. Objects whose patch is accepted are patched as
// without --force. One kubectl does it all, so a new cluster's first
// control plane reports ready one kubectl start sooner than with a delete
// task before the apply.
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
		Argv:   r.kubectl("apply", "--force", "-f", r.l.RBAC, "-f", r.l.CoreDNS, "-f", r.l.KubeDNSService),
		After:  []string{r.l.UnitAPIServer},
		Reason: "kubectl apply the RBAC, CoreDNS and " + object + " (--force: an object whose change cannot be patched in place, such as the Service's cluster IP, is deleted and created again)",
	}, r.l.RBAC, r.l.CoreDNS, r.l.KubeDNSService, r.l.AdminKubeconfig)
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
