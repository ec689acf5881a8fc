package api

import "fmt"

// Phases of a rotation of a cluster's certificate authorities. Every phase
// reaches the nodes the way a spec change does (one control plane at a
// time, kubelets in batches, gates between steps); the controller moves to
// the next one once every member applied the last and the cluster is ready.
const (
	// CARotationTrust: every node trusts the current and the new CAs; the
	// current ones still issue every certificate.
	CARotationTrust = "trust"
	// CARotationReissue: the new CAs issue every certificate; the old ones
	// are still trusted, so a node not restarted yet keeps talking to one
	// that was.
	CARotationReissue = "reissue"
)

// MaxCAGeneration bounds spec.caGeneration.
const MaxCAGeneration = 1 << 20

// CARotation is a rotation of the cluster's certificate authorities (the
// cluster, etcd and front-proxy CAs) from one generation to the next.
type CARotation struct {
	// From is the generation of the CAs being replaced.
	From int `json:"from" yaml:"from"`
	// To is the generation of the CAs replacing them.
	To int `json:"to" yaml:"to"`
	// Phase is trust or reissue.
	Phase string `json:"phase" yaml:"phase"`
	// Started is when the rotation started, RFC 3339.
	Started string `json:"started,omitempty" yaml:"started,omitempty"`
}

// CAState is the generation of the CAs that issue a cluster's
// certificates and the rotation in progress, if any.
type CAState struct {
	Generation int
	Rotation   *CARotation
}

// CAStateAfterApply is the CA state a render of c sees: the stored one,
// or, when spec.caGeneration passed the stored generation and no rotation
// runs, the first phase of a rotation to it. A cluster not stored yet
// (stored false) gets CAs of spec.caGeneration and no rotation.
func (c *KubernetesCluster) CAStateAfterApply(stored bool) CAState {
	if !stored {
		return CAState{Generation: c.Spec.CAGeneration}
	}
	st := CAState{Generation: c.Status.CAGeneration, Rotation: c.Status.CARotation}
	if st.Rotation == nil && c.Spec.CAGeneration > st.Generation {
		st.Rotation = &CARotation{From: st.Generation, To: c.Spec.CAGeneration, Phase: CARotationTrust}
	}
	return st
}

// Next is the state that follows s once every member applied it: trust
// leads to reissue under the new generation, reissue to the end of the
// rotation. ok is false when no rotation runs.
func (s CAState) Next() (next CAState, ok bool) {
	r := s.Rotation
	switch {
	case r == nil:
		return s, false
	case r.Phase == CARotationTrust:
		n := *r
		n.Phase = CARotationReissue
		return CAState{Generation: r.To, Rotation: &n}, true
	}
	return CAState{Generation: r.To}, true
}

// Key names s in one string, "" for the first generation without a
// rotation: a spec rollout records the state it was planned for.
func (s CAState) Key() string {
	if s.Rotation == nil {
		if s.Generation == 0 {
			return ""
		}
		return fmt.Sprint(s.Generation)
	}
	return fmt.Sprintf("%d>%d %s", s.Rotation.From, s.Rotation.To, s.Rotation.Phase)
}

// CAStateStored is the CA state c's status records.
func (c *KubernetesCluster) CAStateStored() CAState {
	return CAState{Generation: c.Status.CAGeneration, Rotation: c.Status.CARotation}
}

// CARotating reports whether the cluster's CAs have not reached
// spec.caGeneration yet: a rotation runs, or one is due to start.
func (c *KubernetesCluster) CARotating() bool {
	return c.Status.CARotation != nil || c.Status.CAGeneration < c.Spec.CAGeneration
}
