package chaos

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Bounds of one run's fault schedule.
const (
	// FaultsPerRun is how many faults one run of make chaos injects, one
	// at a time: about 30 s of faults.
	FaultsPerRun = 8
	// GateFaults is how many faults one run of a plain go test injects,
	// so that GateRuns runs fit in make test.
	GateFaults = 2
	// MaxFaults caps FaultsEnv.
	MaxFaults = 100
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
	// RemoveRejoin takes a replica out of the raft configuration and
	// kills it, then brings it back as a new, empty member on the same
	// addresses.
	RemoveRejoin FaultKind = "remove-rejoin"
	// IsolateLeader cuts whoever leads off from the other replicas both
	// ways (clients still reach it): the Jepsen case for lease reads.
	IsolateLeader FaultKind = "isolate-leader"
	// MuteLeader drops every packet the leader sends to the others, but
	// not theirs to it: they elect a new leader the old one hears of.
	MuteLeader FaultKind = "mute-leader"
	// DeafLeader drops every packet the others send to the leader: it
	// hears no acknowledgement and must step down on its own.
	DeafLeader FaultKind = "deaf-leader"
	// IsolateReplica cuts a replica off from the others both ways.
	IsolateReplica FaultKind = "isolate"
	// PartitionPair cuts a replica and the next one off from each other
	// both ways; the third still hears both (a bridge partition).
	PartitionPair FaultKind = "partition-pair"
)

// FaultKinds lists the kinds a schedule draws from: process faults and
// membership changes always, partitions when the replicas have a network
// of their own (network true).
func FaultKinds(network bool) []FaultKind {
	kinds := []FaultKind{KillRestart, PauseResume, KillLeader, PauseLeader, RemoveRejoin}
	if network {
		kinds = append(kinds, IsolateLeader, MuteLeader, DeafLeader, IsolateReplica, PartitionPair)
	}
	return kinds
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
func (f Fault) Leader() bool {
	switch f.Kind {
	case KillLeader, PauseLeader, IsolateLeader, MuteLeader, DeafLeader:
		return true
	}
	return false
}

// Schedule draws n faults of kinds for a cluster of replicas from seed:
// the same seed, count and kinds give the same schedule.
func Schedule(seed uint64, replicas, n int, kinds []FaultKind) []Fault {
	rng := rand.New(rand.NewPCG(seed, 0))
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
