package plan

import (
	"fmt"
	"slices"
)

// etcdState projects etcd membership and health through a plan's steps.
type etcdState struct {
	members []string
	healthy map[string]bool
}

func newEtcdState(members []string, ready func(string) bool) *etcdState {
	e := &etcdState{healthy: map[string]bool{}}
	for _, m := range members {
		e.add(m, ready(m))
	}
	return e
}

func (e *etcdState) add(node string, healthy bool) {
	if !slices.Contains(e.members, node) {
		e.members = append(e.members, node)
	}
	e.healthy[node] = healthy
}

func (e *etcdState) remove(node string) {
	e.members = slices.DeleteFunc(e.members, func(m string) bool { return m == node })
	delete(e.healthy, node)
}

// stop keeps node a member but marks it down, as a cluster teardown does.
func (e *etcdState) stop(node string) { e.healthy[node] = false }

func (e *etcdState) healthyCount() int {
	n := 0
	for _, m := range e.members {
		if e.healthy[m] {
			n++
		}
	}
	return n
}

// down lists the members that are not healthy.
func (e *etcdState) down() []string {
	var out []string
	for _, m := range e.members {
		if !e.healthy[m] {
			out = append(out, m)
		}
	}
	return out
}

// quorum is the majority of the current voting members.
func (e *etcdState) quorum() int { return quorumOf(len(e.members)) }

func (e *etcdState) hasQuorum() bool { return len(e.members) > 0 && e.healthyCount() >= e.quorum() }

// String renders the state as "3/3 healthy, quorum 2", marking a lost quorum.
func (e *etcdState) String() string {
	s := e.counts()
	if len(e.members) > 0 && !e.hasQuorum() {
		s += ": NO QUORUM"
	}
	return s
}

// counts renders the state as "3/3 healthy, quorum 2".
func (e *etcdState) counts() string {
	if len(e.members) == 0 {
		return "no etcd members"
	}
	return fmt.Sprintf("%d/%d healthy, quorum %d", e.healthyCount(), len(e.members), e.quorum())
}

func quorumOf(members int) int { return members/2 + 1 }
