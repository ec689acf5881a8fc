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

// busyDeleting decides a delete of a cluster already being deleted: adding
// --force escalates it (the teardown then gives up on nodes that do not
// finish), anything else is blocked since it would change nothing.
func (b *builder) busyDeleting(j job) {
	forced := hasTrue(b.env.status[j.name].Conditions, api.ConditionForceDelete)
	switch {
	case j.force && !forced:
		return
	case forced:
		b.block(CodeClusterBusy, "status.phase", "",
			fmt.Sprintf("wait until the deletion finishes (`kctl kubernetes health %s` names the nodes it waits for)", j.name),
			"the cluster is already being deleted with --force")
	default:
		b.block(CodeClusterBusy, "status.phase", "",
			fmt.Sprintf("wait until the deletion finishes (`kctl kubernetes health %s` names the nodes it waits for), or run `kctl kubernetes delete %s --force`", j.name, j.name),
			"the cluster is already being deleted; add --force to give up on nodes that do not finish their teardown")
	}
}

// hasTrue reports whether conds hold condition typ with status True.
func hasTrue(conds []api.Condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == "True"
		}
	}
	return false
}

// busy blocks a change while the stored cluster is in a phase that is itself a
// change in progress. Delete and replace are allowed while bootstrapping,
// updating or scaling, so a stuck cluster can always be removed.
func (b *builder) busy(j job) {
	switch j.phase {
	case api.PhaseDeleting:
		if j.action == ActionDelete {
			b.busyDeleting(j)
			return
		}
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
