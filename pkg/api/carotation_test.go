package api

import "testing"

// TestCAStateAfterApply walks a rotation from a raised spec.caGeneration
// to its end: trust, reissue under the new generation, then none.
func TestCAStateAfterApply(t *testing.T) {
	c := &KubernetesCluster{Spec: ClusterSpec{CAGeneration: 2}, Status: ClusterStatus{CAGeneration: 1}}
	if got := c.CAStateAfterApply(false); got.Generation != 2 || got.Rotation != nil {
		t.Fatalf("new cluster: %+v, want generation 2 and no rotation", got)
	}
	st := c.CAStateAfterApply(true)
	if st.Generation != 1 || st.Rotation == nil || *st.Rotation != (CARotation{From: 1, To: 2, Phase: CARotationTrust}) {
		t.Fatalf("stored cluster: %+v %+v, want a trust phase 1>2", st, st.Rotation)
	}
	var keys []string
	for ok := true; ok; st, ok = st.Next() {
		keys = append(keys, st.Key())
	}
	want := []string{"1>2 trust", "1>2 reissue", "2"}
	if len(keys) != len(want) {
		t.Fatalf("keys %q, want %q", keys, want)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("keys %q, want %q", keys, want)
		}
	}
	if k := (CAState{}).Key(); k != "" {
		t.Errorf("first generation key %q, want empty (rollouts planned before rotations have none)", k)
	}
	c.Status.CARotation = &CARotation{From: 1, To: 2, Phase: CARotationReissue}
	c.Status.CAGeneration = 2
	c.Spec.CAGeneration = 3
	if got := c.CAStateAfterApply(true); got.Rotation.Phase != CARotationReissue || got.Rotation.To != 2 {
		t.Errorf("a running rotation is kept until it ends: got %+v", got.Rotation)
	}
}
