package render

// FieldManager is the field manager of the objects the kubectl tasks apply
// (server-side apply).
const FieldManager = "kcore"

// serverSideReason ends the reason of a task whose argv is kubectlApply.
const serverSideReason = " (server-side apply, field manager " + FieldManager + ")"

// noSchemaCheck is the kubectl flag of every kubectl task. With kubectl's
// default (--validate=strict), kubectl first fetches and parses the API
// server's OpenAPI document of each group-version it applies, to learn
// whether the server checks fields, and the API server builds each one on
// its first request: on a new cluster's busy first control plane that was
// 2-3 s of each task's 3-4 s. The manifests these tasks apply are kcore's
// own templates, not the user's YAML; the lab test applies each of them
// with --validate=strict and --dry-run=server against the real API server,
// where an unknown or duplicate field fails it.
const noSchemaCheck = "--validate=false"

// kubectlApply is the argv that applies manifests with the admin
// kubeconfig's credentials against the local API server (its certificate
// has 127.0.0.1 among its SANs), not the endpoint admin.conf names: the
// tasks run on a control plane right after its own kube-apiserver is ready,
// when the VIP may not be up yet. It is server-side apply: one request per
// object, the merge done by the API server, so kubectl neither reads each
// object first nor computes a patch from the API's schema, and
// --force-conflicts takes back fields another manager changed, as a
// client-side apply overwrote them. See noSchemaCheck for its
// --validate=false.
func (r *renderer) kubectlApply(paths ...string) []string {
	args := []string{"apply", "--server-side", "--force-conflicts", "--field-manager=" + FieldManager, noSchemaCheck}
	for _, p := range paths {
		args = append(args, "-f", p)
	}
	return r.kubectl(args...)
}

// kubectl is the argv of a kubectl command against the local API server
// with the admin kubeconfig's credentials, as kubectlApply.
func (r *renderer) kubectl(args ...string) []string {
	return append([]string{"kubectl", "--kubeconfig=" + r.l.AdminKubeconfig, "--server=" + r.localAPIURL()}, args...)
}

// KubectlManifests are the files the layout's kubectl tasks apply (with
// noSchemaCheck): the lab test applies each one it finds with kubectl's
// strict field validation as a server-side dry run.
func (l Layout) KubectlManifests() []string {
	return []string{l.RBAC, l.CoreDNS, l.KubeDNSService, l.Provisioner, l.CiliumL2}
}
