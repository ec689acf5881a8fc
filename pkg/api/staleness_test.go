package api

import (
	"testing"
	"time"
)

func TestStaleFor(t *testing.T) {
	at := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	st := func(every string) ClusterStatus {
		return ClusterStatus{Phase: PhaseReady, LastHealthCheck: at.Format(time.RFC3339), HealthInterval: every}
	}
	for _, tc := range []struct {
		name  string
		s     ClusterStatus
		after time.Duration
		want  time.Duration
	}{
		{"just checked", st("10s"), time.Second, 0},
		{"at the floor", st("10s"), MinStaleAfter, 0},
		{"past the floor", st("10s"), MinStaleAfter + time.Second, MinStaleAfter + time.Second},
		{"three passes of a long interval", st("30s"), 90 * time.Second, 0},
		{"past three passes", st("30s"), 91 * time.Second, 91 * time.Second},
		{"no interval recorded", st(""), time.Hour, 0},
		{"bad interval", st("often"), time.Hour, 0},
		{"zero interval", st("0s"), time.Hour, 0},
		{"never checked", ClusterStatus{HealthInterval: "10s"}, time.Hour, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.StaleFor(at.Add(tc.after)); got != tc.want {
				t.Errorf("StaleFor(+%s) = %s, want %s", tc.after, got, tc.want)
			}
		})
	}
}

func TestReadyAt(t *testing.T) {
	at := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	cluster := func(phase string, checked time.Duration, ro *SpecRollout) *KubernetesCluster {
		c := &KubernetesCluster{Metadata: ObjectMeta{Name: "lab", Generation: 4}}
		c.Status = ClusterStatus{Phase: phase, LastHealthCheck: at.Add(-checked).Format(time.RFC3339), HealthInterval: "10s", SpecRollout: ro}
		return c
	}
	for _, tc := range []struct {
		name string
		c    *KubernetesCluster
		want bool
	}{
		{"ready and current", cluster(PhaseReady, time.Second, nil), true},
		{"ready but stale", cluster(PhaseReady, time.Hour, nil), false},
		{"bootstrapping", cluster(PhaseBootstrapping, time.Second, nil), false},
		{"degraded", cluster(PhaseDegraded, time.Second, nil), false},
		{"ready between two steps of the spec's rollout", cluster(PhaseReady, time.Second, &SpecRollout{Generation: 4, Phase: "rolling"}), false},
		{"ready with the spec rolled out", cluster(PhaseReady, time.Second, &SpecRollout{Generation: 4, Phase: SpecRolloutDone}), true},
		{"ready with an older spec's rollout left", cluster(PhaseReady, time.Second, &SpecRollout{Generation: 3, Phase: "rolling"}), true},
		{"ready between two phases of a CA rotation", with(cluster(PhaseReady, time.Second, nil), func(c *KubernetesCluster) {
			c.Spec.CAGeneration = 1
			c.Status.CARotation = &CARotation{From: 0, To: 1, Phase: CARotationReissue}
			c.Status.CAGeneration = 1
		}), false},
		{"ready before a raised CA generation started rotating", with(cluster(PhaseReady, time.Second, nil), func(c *KubernetesCluster) { c.Spec.CAGeneration = 1 }), false},
		{"ready with the CAs rotated", with(cluster(PhaseReady, time.Second, nil), func(c *KubernetesCluster) {
			c.Spec.CAGeneration, c.Status.CAGeneration = 1, 1
		}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.ReadyAt(at); got != tc.want {
				t.Errorf("ReadyAt = %v, want %v", got, tc.want)
			}
		})
	}
}

// with returns c changed by f.
func with(c *KubernetesCluster, f func(*KubernetesCluster)) *KubernetesCluster {
	f(c)
	return c
}
