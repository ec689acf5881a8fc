package controller

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// LogRecordedMember is the message a follower logs (at info, with the
// leader and what it recorded) once the leader recorded its Member object.
const LogRecordedMember = "recorded this replica as a member"

// Bounds of a follower recording its own Member object.
const (
	// memberCheckInterval is how often a replica looks at who leads and at
	// its own Member object in its local state (two map reads).
	memberCheckInterval = 250 * time.Millisecond
	// memberRecordAttempts is how many times a follower asks one leader,
	// in one term, to record it before it waits for the next leader.
	memberRecordAttempts = 6
	// memberRecordBackoff is the wait after the first failed attempt; it
	// doubles up to memberRecordMaxBackoff.
	memberRecordBackoff    = 200 * time.Millisecond
	memberRecordMaxBackoff = 5 * time.Second
	// memberRecordTimeout bounds one request to the leader.
	memberRecordTimeout = 10 * time.Second
)

// term is one leader's term, as a follower sees it.
type term struct {
	leader string
	number uint64
}

// recordSelfWhenFollower keeps this replica's Member object current while
// it follows: on start and whenever the leader changes, once a leader is
// known and its HTTP address recorded, a replica whose Member object in
// its local state does not hold its raft address, API address and schema
// asks the leader to record them (PUT /v1/members/{id}, straight to the
// leader with the replica's own certificate), with bounded retries, until
// it is recorded or the leader changes. A restarted replica (neither
// --bootstrap nor --join) so records a new build's schema without having
// to lead; recordSelfWhenLeader covers the leader. A joining replica
// starts once its join succeeded, which recorded it.
func (c *Controller) recordSelfWhenFollower() {
	defer c.wg.Done()
	select {
	case <-c.stop:
		return
	case <-c.joined:
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: c.clientTL}, Timeout: memberRecordTimeout}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(memberCheckInterval)
	defer tick.Stop()
	var done term // the term whose leader recorded this replica, or refused
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		t, leaderHTTP, ok := c.followerTerm()
		if !ok || t == done || c.selfRecorded() {
			continue
		}
		c.recordSelf(client, t, leaderHTTP)
		done = t
	}
}

// followerTerm returns the leader's term and HTTP address when this
// replica follows a known leader whose address is recorded.
func (c *Controller) followerTerm() (term, string, bool) {
	if c.node.IsLeader() {
		return term{}, "", false
	}
	id, _ := c.node.Leader()
	if id == "" || id == c.node.ID() {
		return term{}, "", false
	}
	m, ok := c.memberRecord(id)
	if !ok || m.HTTPAddr == "" {
		return term{}, "", false
	}
	return term{leader: id, number: c.node.Raft().CurrentTerm()}, m.HTTPAddr, true
}

// memberRecord is what raft id recorded in the local state.
func (c *Controller) memberRecord(id string) (apiv1.MemberData, bool) {
	var m apiv1.MemberData
	o, ok := c.node.State().Get(apiv1.KindMember, id)
	if !ok || json.Unmarshal(o.Data, &m) != nil {
		return apiv1.MemberData{}, false
	}
	return m, true
}

// ownRecord is the Member record this replica wants.
func (c *Controller) ownRecord() apiv1.RecordMemberRequest {
	return apiv1.RecordMemberRequest{RaftAddr: c.node.Addr(), HTTPAddr: c.httpAddr, Schema: c.cfg.schema()}
}

// selfRecorded reports whether the local state already holds ownRecord.
func (c *Controller) selfRecorded() bool {
	m, ok := c.memberRecord(c.node.ID())
	want := c.ownRecord()
	return ok && m.RaftAddr == want.RaftAddr && m.HTTPAddr == want.HTTPAddr && m.Schema == want.Schema
}

// recordSelf asks the leader of t at addr to record this replica, at most
// memberRecordAttempts times, until it does, refuses, or t ends. It logs
// once what it recorded, or why it gave up.
func (c *Controller) recordSelf(client *http.Client, t term, addr string) {
	want := c.ownRecord()
	body, err := json.Marshal(want)
	if err != nil {
		c.log.Warn("record this replica as a member", "err", err)
		return
	}
	url := apiURL(addr, apiv1.MemberPath(c.node.ID()))
	delay := memberRecordBackoff
	var last error
	for attempt := 1; attempt <= memberRecordAttempts; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), memberRecordTimeout)
		last = sendMember(ctx, client, http.MethodPut, url, body)
		cancel()
		if last == nil {
			c.log.Info(LogRecordedMember, "leader", t.leader, "raft", want.RaftAddr, "api", want.HTTPAddr, "schema", want.Schema)
			return
		}
		if final(last) {
			c.log.Warn("the leader refused to record this replica; it records itself when the leader changes or it leads", "leader", t.leader, "err", last)
			return
		}
		if attempt == memberRecordAttempts {
			break
		}
		select {
		case <-c.stop:
			return
		case <-time.After(delay):
		}
		if now, _, ok := c.followerTerm(); !ok || now != t {
			return
		}
		delay = min(2*delay, memberRecordMaxBackoff)
	}
	c.log.Warn("could not record this replica as a member; it tries again when the leader changes or it leads", "leader", t.leader, "attempts", memberRecordAttempts, "err", last)
}

// final reports whether a member request's error is an answer that another
// attempt at the same leader would get again (a 4xx: refused, unknown id,
// an older leader without the route, a raft address that differs).
func final(err error) bool {
	var refused *refusal
	if errors.As(err, &refused) {
		return true
	}
	var eb *apiv1.ErrorBody
	return errors.As(err, &eb) && eb.Code == apiv1.CodeConflict
}
