package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
)

// updateTransition applies one update action (apiv1.UpdateActions) to a
// stored ClusterUpdate through pkg/rollout's state machine; reason is
// recorded in the status message of the actions that keep one.
func updateTransition(action string, u *api.ClusterUpdate, reason string) error {
	var (
		next api.UpdateStatus
		err  error
	)
	switch action {
	case apiv1.UpdateApprove:
		next, err = rollout.Approve(u.Status)
		u.Spec.Approve = true
	case apiv1.UpdatePause:
		next, err = rollout.Pause(u.Status, reason)
	case apiv1.UpdateResume:
		next, err = rollout.Resume(u.Status)
	case apiv1.UpdateRollback:
		next, err = rollout.StartRollback(u.Status, reason)
	default:
		return fmt.Errorf("apply update action %q: no such action", action)
	}
	if err != nil {
		return err
	}
	u.Status = next
	return nil
}

// updateAction serves POST /v1/updates/{name}/{action}: the controller
// reads the stored ClusterUpdate, makes the action's transition and
// stores the result on the condition that the update did not change since
// it was read, together with the call's audit entry. With ?cas=N the update's
// ModifyIndex must still be N, the version the caller looked at; without,
// a write that got in between the read and the put (the roller's progress)
// makes it read again and try again (retryCAS). A transition the update's
// phase does not allow is a conflict. With a request id the action is
// applied at most once: a retry after an attempt landed answers as that
// attempt did.
func (s *Server) updateAction(action string) func(*call) (any, error) {
	return func(c *call) (any, error) {
		name := c.r.PathValue("name")
		expect, err := casParam(c)
		if err != nil {
			return nil, err
		}
		if err := emptyBody(c); err != nil {
			return nil, err
		}
		reqID := c.clientReqID
		if expect != nil {
			return s.updateOnce(c, action, name, expect, reqID)
		}
		return retryCAS(c, func() (any, error) { return s.updateOnce(c, action, name, nil, reqID) })
	}
}

// updateOnce is one attempt of an update action, under c's request id;
// reqID is the caller's, whose every attempt's id it looks up for a replay.
func (s *Server) updateOnce(c *call, action, name string, expect *uint64, reqID string) (any, error) {
	st := s.backend.State()
	o, found := st.Get(api.KindClusterUpdate, name)
	if !found {
		return nil, notFound("%s/%s not found", api.KindClusterUpdate, name)
	}
	if reqID != "" {
		// Read after the object: when no attempt's id is remembered now,
		// the object read predates every earlier attempt's write. An
		// attempt that lost the compare-and-set is remembered too, but
		// wrote nothing: the next one may still land.
		for n := 1; n <= casAttempts; n++ {
			if res, seen := st.Recent(c.caller(), attemptID(reqID, n)); seen && !errors.Is(res.Err, store.ErrConflict) {
				c.clientReqID = attemptID(reqID, n)
				return s.replayUpdate(c, o)
			}
		}
	}
	if expect != nil && *expect != o.ModifyIndex {
		return nil, newError(apiv1.CodeConflict, "%s ClusterUpdate %s: it changed since it was read (modify index %d, not %d): %w", action, name, o.ModifyIndex, *expect, store.ErrConflict)
	}
	var u api.ClusterUpdate
	if err := json.Unmarshal(o.Data, &u); err != nil {
		return nil, fmt.Errorf("decode ClusterUpdate %s: %w", name, err)
	}
	from := u.Status.Phase
	if err := updateTransition(action, &u, fmt.Sprintf("%s requested by %s", action, c.subject())); err != nil {
		if errors.Is(err, rollout.ErrTransition) {
			return nil, newError(apiv1.CodeConflict, "%s ClusterUpdate %s: %w", action, name, err)
		}
		return nil, err
	}
	data, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("encode ClusterUpdate %s: %w", name, err)
	}
	idx, err := s.applyAudited(c, store.Op{Put: &store.Put{Kind: api.KindClusterUpdate, Name: name, Data: data, ExpectModifyIndex: store.Expect(o.ModifyIndex)}})
	if err != nil {
		return nil, err
	}
	return apiv1.UpdateActionResponse{Index: idx, From: from, Phase: u.Status.Phase}, nil
}

// replayUpdate answers a retried update action whose request id the
// state remembers, without making the transition again (the update's new
// phase may no longer allow it): it sends the stored object back
// unchanged under the same request id, so the store answers with the first
// attempt's result, or refuses the id when it was used for another object,
// and applies nothing.
func (s *Server) replayUpdate(c *call, o store.Object) (any, error) {
	idx, err := s.applyAudited(c, store.Op{Put: &store.Put{Kind: o.Kind, Name: o.Name, Data: o.Data, ExpectModifyIndex: store.Expect(o.ModifyIndex)}})
	if err != nil {
		return nil, err
	}
	var u api.ClusterUpdate
	if err := json.Unmarshal(o.Data, &u); err != nil {
		return nil, fmt.Errorf("decode ClusterUpdate %s: %w", o.Name, err)
	}
	return apiv1.UpdateActionResponse{Index: idx, Phase: u.Status.Phase}, nil
}

// emptyBody refuses a request body: the update actions take none.
func emptyBody(c *call) error {
	var one [1]byte
	n, err := io.ReadFull(c.r.Body, one[:])
	if n > 0 {
		return badRequest("%s %s takes no body", c.r.Method, c.rt.pattern)
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("read body: %w", err)
	}
	return nil
}
