package security

import (
	"fmt"
	"net/http"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/tests/apiserve"
	"kcore.dev/kcore/tests/harness"
)

// TestRemoveLeaderMemberKeepsLeader removes the leader's Member through a
// follower and through the leader itself: the leader hands leadership over
// first, so the answer is a success and writes keep working through both
// remaining replicas.
func TestRemoveLeaderMemberKeepsLeader(t *testing.T) {
	for _, viaLeader := range []bool{false, true} {
		t.Run(map[bool]string{false: "via follower", true: "via leader"}[viaLeader], func(t *testing.T) {
			removeLeader(t, viaLeader)
		})
	}
}

func removeLeader(t *testing.T, viaLeader bool) {
	e := newEnv(t, 3)
	leader := e.c.WaitLeader()
	var rest []*harness.Replica
	for _, r := range e.c.Running() {
		if r != leader {
			rest = append(rest, r)
		}
	}
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	via := rest[0]
	if viaLeader {
		via = leader
	}
	r := e.call(admin, apiserve.Of(via), http.MethodDelete, apiv1.PathMembers+"/"+leader.ID, nil)
	want(t, r, http.StatusOK, "")

	for _, rr := range rest {
		e.writeThrough(rr, "after-"+rr.ID)
	}
	// Every remaining replica lists the two of them, one leading, and the
	// removed leader's Member is gone.
	viewer := e.client(apiv1.RoleViewer, "victor")
	for _, rr := range rest {
		e.c.Eventually(harness.DefaultTimeout, func() error {
			r := e.call(viewer, apiserve.Of(rr), http.MethodGet, apiv1.PathMembers, nil)
			if r.status != http.StatusOK {
				return fmt.Errorf("members via %s: status %d %s", rr.ID, r.status, r.body)
			}
			var ms []apiv1.Member
			r.decode(t, &ms)
			leaders := 0
			for _, m := range ms {
				if m.ID == leader.ID {
					return fmt.Errorf("removed leader %s still listed: %+v", leader.ID, ms)
				}
				if m.Leader {
					leaders++
				}
			}
			if len(ms) != 2 || leaders != 1 {
				return fmt.Errorf("members via %s: %+v, want 2 with one leader", rr.ID, ms)
			}
			if _, ok := rr.Node().State().Get(apiv1.KindMember, leader.ID); ok {
				return fmt.Errorf("member object %s still stored on %s", leader.ID, rr.ID)
			}
			return nil
		})
	}
}
