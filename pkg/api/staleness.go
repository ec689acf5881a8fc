package api

import "time"

// A cluster's status is stale when no health pass has refreshed it for
// StaleAfterPasses of the leader's health intervals, and at least
// MinStaleAfter, so a few seconds of clock skew between a reader and the
// controllers never make a current status look stale.
const (
	StaleAfterPasses = 3
	MinStaleAfter    = 30 * time.Second
)

// StaleFor is how long the status has gone without a health pass, when
// that is past the staleness bound at now: no leader has checked the
// cluster since (the controllers were down or without a leader), so its
// phase says what was true then, not now. It is 0 for a current status
// and for one without a health pass time or interval.
func (s ClusterStatus) StaleFor(now time.Time) time.Duration {
	last, err := time.Parse(time.RFC3339, s.LastHealthCheck)
	if err != nil {
		return 0
	}
	every, err := time.ParseDuration(s.HealthInterval)
	if err != nil || every <= 0 {
		return 0
	}
	age := now.Sub(last)
	if age <= max(StaleAfterPasses*every, MinStaleAfter) {
		return 0
	}
	return age
}

// SpecRolling reports whether the rollout of the cluster's current spec
// generation still has steps to run: the phase may read ready between two
// steps.
func (c *KubernetesCluster) SpecRolling() bool {
	ro := c.Status.SpecRollout
	return ro != nil && ro.Generation == c.Metadata.Generation && ro.Phase != SpecRolloutDone
}

// ReadyAt reports whether a wait for the cluster to be ready is over at
// now: the phase is ready, no step of its current spec's rollout is left,
// no CA rotation is left (CARotating: the phase reads ready between its
// phases), and a health pass refreshed the status lately (StaleFor is 0),
// so the phase is not the last word of controllers that went down. kctl's
// apply --wait and the Terraform provider's wait_ready both stop on it.
func (c *KubernetesCluster) ReadyAt(now time.Time) bool {
	return c.Status.Phase == PhaseReady && !c.SpecRolling() && !c.CARotating() && c.Status.StaleFor(now) == 0
}
