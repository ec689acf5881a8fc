package chaos

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Bounds of one run's fault schedule.
const (
	// FaultsPerRun is how many faults one run injects, one at a time.
	FaultsPerRun = 4
	// MinHold and MaxHold bound how long a fault lasts before it heals.
	MinHold = 200 * time.Millisecond
	MaxHold = 4 * time.Second
	// MaxGap bounds the quiet time before each fault.
	MaxGap = time.Second
)

// FaultKind is one kind of injected fault.
type FaultKind string

// The faults a schedule draws from.
const (
	// KillRestart SIGKILLs a replica, then restarts it from its data dir.
	KillRestart FaultKind = "kill-restart"
	// PauseResume SIGSTOPs a replica, then SIGCONTs it.
	PauseResume FaultKind = "pause-resume"
	// KillLeader is KillRestart of the replica that leads when it fires.
	KillLeader FaultKind = "kill-leader"
	// PauseLeader is PauseResume of the replica that leads when it fires.
	PauseLeader FaultKind = "pause-leader"
)

// faultKinds lists the kinds a schedule draws from.
func faultKinds() []FaultKind {
	return []FaultKind{KillRestart, PauseResume, KillLeader, PauseLeader}
}

// Fault is one step of a schedule.
type Fault struct {
	Kind FaultKind
	// Replica is the target of a non-leader fault.
	Replica int
	// Gap is the wait before the fault, Hold how long it lasts.
	Gap, Hold time.Duration
}

func (f Fault) String() string {
	target := fmt.Sprintf("r%d", f.Replica)
	if f.Leader() {
		target = "leader"
	}
	return fmt.Sprintf("%s(%s) after %s for %s", f.Kind, target, f.Gap, f.Hold)
}

// Leader reports whether the fault targets whoever leads.
func (f Fault) Leader() bool { return f.Kind == KillLeader || f.Kind == PauseLeader }

// Kill reports whether the fault kills (rather than pauses) its target.
func (f Fault) Kill() bool { return f.Kind == KillRestart || f.Kind == KillLeader }

// Schedule draws n faults for a cluster of replicas from seed: the same
// seed gives the same schedule.
func Schedule(seed uint64, replicas, n int) []Fault {
	rng := rand.New(rand.NewPCG(seed, 0))
	kinds := faultKinds()
	out := make([]Fault, n)
	for i := range out {
		out[i] = Fault{
			Kind:    kinds[rng.IntN(len(kinds))],
			Replica: rng.IntN(replicas),
			Gap:     time.Duration(rng.Int64N(int64(MaxGap))),
			Hold:    MinHold + time.Duration(rng.Int64N(int64(MaxHold-MinHold)+1)),
		}
	}
	return out
}
