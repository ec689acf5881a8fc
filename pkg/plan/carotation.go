package plan

import (
	"fmt"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// checkCAGeneration blocks lowering spec.caGeneration and warns what
// raising it starts: a CA rotation whose end invalidates the credentials
// handed out before it.
func (b *builder) checkCAGeneration(j job, next *api.KubernetesCluster) {
	old, cur := j.stored.Spec.CAGeneration, next.Spec.CAGeneration
	switch {
	case cur < old:
		b.block(CodeCAGenerationLowered, "spec.caGeneration", "", fmt.Sprintf("keep spec.caGeneration at %d, or raise it to rotate the CAs again", old),
			"spec.caGeneration cannot go down (%d → %d): a generation's CAs are gone once the rotation away from them ends", old, cur)
	case cur > old:
		if r := b.env.status[j.name].CARotation; r != nil {
			b.warn(CodeCARotation, "spec.caGeneration", "", fmt.Sprintf("follow it with `kctl kubernetes get %s`", j.name),
				"the rotation to CA generation %d is in its %s phase: the rotation to generation %d starts once it ends", r.To, r.Phase, cur)
		}
		b.warn(CodeCARotation, "spec.caGeneration", "",
			fmt.Sprintf("once `kctl kubernetes get %s` shows no CA rotation, fetch new credentials with `kctl kubernetes kubeconfig %s`", j.name, j.name),
			"the cluster, etcd and front-proxy CAs rotate to generation %d in three rolls (trust both, reissue every certificate, drop the old CAs); kubeconfigs and client certificates handed out before stop working when it ends, while nodes, the controller and pods (kube-root-ca.crt) follow by themselves", cur)
	}
}

// rotationSteps appends the steps of the CA rotation phases that follow
// the one this plan applies, when the plan starts a rotation: each phase
// is the render of the cluster in that phase diffed with the render of
// the phase before (from applied), and the controller moves to it once
// every member applied the one before and the cluster is ready.
func (b *builder) rotationSteps(s *stepper, j job, next *api.KubernetesCluster, nextStatus api.ClusterStatus, applied map[string]*api.NodeState, first int, l render.Layout) {
	if b.env.status[j.name].CARotation != nil {
		return
	}
	rc := *next
	rc.Status = nextStatus
	st := rc.CAStateAfterApply(true)
	if st.Rotation == nil {
		return
	}
	r := st.Rotation
	noteStep(s, first, fmt.Sprintf("CA rotation %d → %d, trust phase: every member trusts both generations; generation %d still issues every certificate", r.From, r.To, r.From))
	prev := applied
	for n, ok := st.Next(); ok; n, ok = n.Next() {
		ps := nextStatus
		ps.CAGeneration, ps.CARotation = n.Generation, n.Rotation
		cur := b.renderFor(next, ps, true)
		if cur == nil {
			return
		}
		note := fmt.Sprintf("CA rotation %d → %d ends once every member applied the reissue phase and the cluster is ready: generation %d is no longer trusted", r.From, r.To, r.From)
		if n.Rotation != nil {
			note = fmt.Sprintf("CA rotation %d → %d, reissue phase, once every member applied the trust phase and the cluster is ready: generation %d issues every certificate, generation %d is still trusted", r.From, r.To, r.To, r.From)
		}
		at := len(s.steps)
		b.stepsFromDiff(s, modeUpdate, l, diffRenders(l, next, next, prev, cur, keepOrder))
		noteStep(s, at, note)
		prev = cur
	}
}

// noteStep puts note before the detail of step i, when there is one.
func noteStep(s *stepper, i int, note string) {
	if i >= len(s.steps) {
		return
	}
	if d := s.steps[i].Detail; d != "" {
		note += "; " + d
	}
	s.steps[i].Detail = note
}
