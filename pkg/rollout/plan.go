package rollout

import (
	"fmt"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

// Plan orders and checks the rollout of in.Update (defaulted) over the
// stored clusters, registered nodes and controller replicas. It is pure:
// the same Input always gives the same plan.
func Plan(in Input) *RolloutPlan {
	u := in.Update
	s := u.Spec
	p := &RolloutPlan{
		Name: u.Metadata.Name, Version: s.Version, UpdateKind: s.UpdateKind,
		Strategy: s.Strategy, BatchSize: 1, MaxUnavailable: s.MaxUnavailable,
		Activation: s.Activation, DrainVMs: s.DrainVMs,
		Approval: s.Approval, WaitsForApproval: s.Approval != api.ApprovalAuto && !s.Approve,
	}
	p.Blocking = append(p.Blocking, checkInvalid(u)...)
	if s.Strategy == api.StrategyBatched {
		p.BatchSize = max(1, min(s.BatchSize, s.MaxUnavailable))
		if s.BatchSize > s.MaxUnavailable {
			p.Warnings = append(p.Warnings, plan.Issue{Code: CodeBatchCapped, Path: "spec.batchSize",
				Message: fmt.Sprintf("batch_size %d is more than max_unavailable %d: each step updates at most %d workers", s.BatchSize, s.MaxUnavailable, p.BatchSize),
				Fix:     "raise max_unavailable or lower batch_size to say what you mean"})
		}
	}
	if s.Activation == api.ActivationReboot {
		p.Warnings = append(p.Warnings, plan.Issue{Code: CodeActivationInPlace, Path: "spec.activation",
			Message: "activation = \"reboot\" is not carried out yet: the roller activates the new pin in place (the units restart; the reboots listed below do not happen)",
			Fix:     "use activation = \"auto\", or reboot each node yourself while its step runs"})
	}
	e := newEnv(in)
	targets, unknown := e.targets()
	p.Blocking = append(p.Blocking, unknown...)
	if len(targets) == 0 {
		p.Warnings = append(p.Warnings, plan.Issue{Code: CodeNoTargets, Message: "the update targets no registered node: nothing will roll"})
	}
	p.Blocking = append(p.Blocking, checkReady(targets)...)
	order, reason, k8s, blocking, warnings := kubernetesRules(e, targets)
	p.Order, p.OrderReason, p.Kubernetes = order, reason, k8s
	p.Blocking = append(p.Blocking, blocking...)
	p.Blocking = append(p.Blocking, checkRuntime(targets, s.TestedOSPins.KubernetesVersion)...)
	p.Warnings = append(p.Warnings, warnings...)
	p.Steps = e.steps(targets, order, p.BatchSize)
	if to, ok := parseVersion(s.TestedOSPins.KubernetesVersion); ok {
		if len(blocking) == 0 {
			p.Blocking = append(p.Blocking, checkProjection(e, p.Steps, to)...)
		}
		etcd, eb, ew := etcdRules(targets, to)
		p.Etcd = etcd
		p.Blocking = append(p.Blocking, eb...)
		p.Warnings = append(p.Warnings, ew...)
	}
	p.Blocking = append(p.Blocking, checkSchema(s, in.Controllers)...)
	p.Warnings = append(p.Warnings, quorumWarnings(e, targets)...)
	return p
}

// quorumWarnings warns about each target cluster whose etcd loses quorum
// while one member restarts (one or two control planes).
func quorumWarnings(e *env, targets []*target) []plan.Issue {
	var out []plan.Issue
	for _, c := range e.clusters {
		n := len(c.Spec.ControlPlaneNodes)
		if n == 0 || n > 2 {
			continue
		}
		for _, t := range targets {
			if t.role == api.RoleControlPlane && c.Spec.IsControlPlane(t.id) {
				out = append(out, plan.Issue{Code: CodeEtcdQuorumPause, Cluster: c.Metadata.Name, Path: "spec.controlPlaneNodes",
					Message: fmt.Sprintf("cluster %s has %d etcd members and quorum %d: while one restarts, etcd cannot commit and the API cannot write", c.Metadata.Name, n, n/2+1),
					Fix:     "run 3 control planes (`kctl kubernetes scale " + c.Metadata.Name + " --add-control-plane ID:ADDRESS`) for updates without a write pause"})
				break
			}
		}
	}
	return out
}
