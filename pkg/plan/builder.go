package plan

import (
	"fmt"

	"kcore.dev/kcore/pkg/api"
)

// builder collects one cluster's issues into the plan.
type builder struct {
	env     *env
	plan    *Plan
	cluster string
}

func (b *builder) block(code, path, node, fix, format string, args ...any) {
	b.plan.Blocking = append(b.plan.Blocking, Issue{
		Code: code, Cluster: b.cluster, Path: path, Node: node,
		Message: fmt.Sprintf(format, args...), Fix: fix,
	})
}

func (b *builder) warn(code, path, node, fix, format string, args ...any) {
	b.plan.Warnings = append(b.plan.Warnings, Issue{
		Code: code, Cluster: b.cluster, Path: path, Node: node,
		Message: fmt.Sprintf(format, args...), Fix: fix,
	})
}

// validate turns api validation errors into invalid-manifest issues. The
// warnings the plan computes itself (even control planes, initialCluster) are
// dropped; any other api warning becomes a manifest-warning.
func (b *builder) validate(c *api.KubernetesCluster) {
	for _, i := range c.Validate() {
		if i.Severity == api.SeverityError {
			b.block(CodeInvalidManifest, i.Path, "", "correct the field in the manifest and plan again", "%s", i.Message)
			continue
		}
		if i.Path == "spec.controlPlaneNodes" || i.Path == "spec.initialCluster" {
			continue
		}
		b.warn(CodeManifestWarning, i.Path, "", "", "%s", i.Message)
	}
}

// busy blocks a change while the stored cluster is in a phase that is itself a
// change in progress. Delete and replace are allowed while bootstrapping,
// updating or scaling, so a stuck cluster can always be removed.
func (b *builder) busy(j job) {
	switch j.phase {
	case api.PhaseDeleting:
		b.block(CodeClusterBusy, "status.phase", "",
			"wait until the deletion finishes (`kctl kubernetes list`), then apply the manifest to create the cluster anew",
			"the cluster is being deleted")
	case api.PhaseBootstrapping, api.PhaseUpdating, api.PhaseScaling:
		if j.action == ActionDelete || j.action == ActionReplace {
			return
		}
		b.block(CodeClusterBusy, "status.phase", "",
			fmt.Sprintf("wait until the cluster is ready or degraded (`kctl kubernetes health %s`), then plan again; delete is always allowed", j.name),
			"the cluster is %s; a new change cannot start until that one finishes", j.phase)
	}
}
