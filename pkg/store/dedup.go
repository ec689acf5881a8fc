package store

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Bounds of the request table: the (caller, request id) pairs the state
// remembers with the result of the command that carried them.
const (
	// DedupRetain is how many request ids the state remembers; when a new
	// one would exceed it, the oldest (lowest index) goes first.
	DedupRetain = 10_000
	// DedupMaxAge is how long, in nanoseconds of leader time, a request id
	// is remembered: it is forgotten once a later command is stamped more
	// than DedupMaxAge after the command that carried it (one hour, far
	// beyond a client's retries through an election).
	DedupMaxAge int64 = 60 * 60 * 1_000_000_000
)

// DedupRecord is one remembered request: who sent it, its id, and the
// result of the command that carried it, as the command's first
// application returned it.
type DedupRecord struct {
	// Caller is the command's Caller.
	Caller string `json:"caller"`
	// RequestID is the command's RequestID.
	RequestID string `json:"requestId"`
	// Index is the raft index the command was applied at.
	Index uint64 `json:"index"`
	// Time is the command's leader time stamp; the record ages out from it.
	Time string `json:"time,omitempty"`
	// Target names what the command wrote (see targetOf): a repeat of the
	// id must write the same objects, or it is refused.
	Target string `json:"target,omitempty"`
	// Code is the result's error code (see ErrorCode), empty on success.
	Code string `json:"code,omitempty"`
	// Message is the result's error text, empty on success.
	Message string `json:"message,omitempty"`
}

// result is the Result a repeat of the request gets.
func (r *DedupRecord) result() Result {
	return Result{Index: r.Index, Err: ErrorFromCode(r.Code, r.Message), Replayed: true}
}

// dedupKey is the request table's key of (caller, id): the caller, a NUL,
// the id, so one caller's ids never match another's (an id holds no NUL).
func dedupKey(caller, id string) []byte {
	return key(caller, id)
}

// orderKey is the key of a record in the index-ordered tree.
func orderKey(index uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, index)
}

// Recent returns the result remembered for the request id of caller, if the
// state still holds it.
func (s *State) Recent(caller, requestID string) (Result, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.dedup.Get(dedupKey(caller, requestID))
	if !ok {
		return Result{}, false
	}
	return v.(*DedupRecord).result(), true
}

// RecentCount returns how many request ids the state remembers.
func (s *State) RecentCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.dedupLen
}

// applyOnce applies e unless it repeats a remembered request, whose
// result it returns instead: the check is part of the replicated apply, so
// two copies of one request (a retry through another leader) cannot both
// take effect. A command with a request id has its result remembered,
// failures included, so a retry of a refused write is refused the same way.
func (s *State) applyOnce(tx *txn, e Entry) Result {
	cmd := e.Cmd
	if cmd.RequestID == "" || cmd.Schema > s.readSchema() {
		res := Result{Index: e.Index, Err: s.applyOne(tx, e.Index, cmd)}
		tx.expireDedup()
		return res
	}
	if strings.ContainsRune(cmd.RequestID, 0) {
		return Result{Index: e.Index, Err: fmt.Errorf("apply %s at %d: request id contains NUL: %w", cmd.Type, e.Index, ErrInvalid)}
	}
	target := targetOf(cmd)
	if v, ok := tx.dedup.Get(dedupKey(cmd.Caller, cmd.RequestID)); ok {
		r := v.(*DedupRecord)
		if r.Target != target {
			return Result{Index: e.Index, Err: fmt.Errorf("apply %s at %d: request id %s was used at %d for %s, not %s: %w",
				cmd.Type, e.Index, cmd.RequestID, r.Index, r.Target, target, ErrInvalid)}
		}
		return r.result()
	}
	err := s.applyOne(tx, e.Index, cmd)
	tx.remember(&DedupRecord{
		Caller: cmd.Caller, RequestID: cmd.RequestID,
		Index: e.Index, Time: cmd.Time, Target: target,
		Code: ErrorCode(err), Message: errorMessage(err),
	})
	tx.expireDedup()
	return Result{Index: e.Index, Err: err}
}

// targetOf names the objects a command writes, e.g. "put Item/a" or, for
// a batch, its operations joined by commas (its audit entry and a put of
// the audit retention left out: the leader adds them to whichever attempt
// comes first). It names neither data nor conditions, which a retry may
// legitimately change (a secret is sealed anew each time).
func targetOf(cmd Command) string {
	switch cmd.Type {
	case TypePut:
		if p, err := payloadOf[Put](cmd); err == nil {
			return "put " + p.Kind + "/" + p.Name
		}
	case TypeDelete:
		if d, err := payloadOf[Delete](cmd); err == nil {
			return "delete " + d.Kind + "/" + d.Name
		}
	case TypeBatch:
		if b, err := payloadOf[Batch](cmd); err == nil {
			names := make([]string, 0, len(b.Ops))
			for _, op := range b.Ops {
				switch {
				case op.Put != nil && op.Put.Kind == KindAuditPolicy:
				case op.Put != nil:
					names = append(names, "put "+op.Put.Kind+"/"+op.Put.Name)
				case op.Delete != nil:
					names = append(names, "delete "+op.Delete.Kind+"/"+op.Delete.Name)
				}
			}
			return strings.Join(names, ",")
		}
	}
	return cmd.Type
}

func errorMessage(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// remember records a request in the transaction's request table.
func (t *txn) remember(r *DedupRecord) {
	t.dedup.Insert(dedupKey(r.Caller, r.RequestID), r)
	t.dedupOrder.Insert(orderKey(r.Index), r)
	t.dedupLen++
}

// expireDedup forgets the oldest requests (lowest index first) while there
// are more than DedupRetain, or the oldest is more than DedupMaxAge older
// than the command being applied. A record without a readable time stamp
// counts as older than any stamped command. Eviction reads only the
// replicated log, so every replica forgets the same requests at the same
// index.
func (t *txn) expireDedup() {
	if t.dedupLen == 0 {
		return
	}
	now, timed := stampNanos(t.time)
	for t.dedupLen > 0 {
		_, v, ok := t.dedupOrder.Root().Minimum()
		if !ok {
			return
		}
		r := v.(*DedupRecord)
		if t.dedupLen <= DedupRetain {
			if !timed {
				return
			}
			if at, ok := stampNanos(r.Time); ok && now-at <= DedupMaxAge {
				return
			}
		}
		t.dedupOrder.Delete(orderKey(r.Index))
		t.dedup.Delete(dedupKey(r.Caller, r.RequestID))
		t.dedupLen--
	}
}

// stampNanos reads a leader time stamp as the leader writes it (UTC,
// RFC 3339 with up to nine fraction digits and a Z) into nanoseconds since
// the Unix epoch; ok is false for anything else. It does the calendar
// arithmetic itself because the store must not import package time.
func stampNanos(s string) (int64, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
		s[13] != ':' || s[16] != ':' || s[len(s)-1] != 'Z' {
		return 0, false
	}
	digits := func(from, to int) (int64, bool) {
		var n int64
		for i := from; i < to; i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			n = n*10 + int64(s[i]-'0')
		}
		return n, true
	}
	var f [6]int64
	for i, at := range [6]int{0, 5, 8, 11, 14, 17} {
		w := 2
		if i == 0 {
			w = 4
		}
		n, ok := digits(at, at+w)
		if !ok {
			return 0, false
		}
		f[i] = n
	}
	y, mo, d, h, mi, sec := f[0], f[1], f[2], f[3], f[4], f[5]
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 {
		return 0, false
	}
	var frac int64
	if rest := s[19 : len(s)-1]; rest != "" {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
			return 0, false
		}
		n, ok := digits(20, len(s)-1)
		if !ok {
			return 0, false
		}
		for range 10 - len(rest) {
			n *= 10
		}
		frac = n
	}
	secs := ((daysFromCivil(y, mo, d)*24+h)*60+mi)*60 + sec
	return secs*1_000_000_000 + frac, true
}

// daysFromCivil returns the days from 1970-01-01 to the proleptic Gregorian
// date y-m-d (y ≥ 1).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	doy := (153*((m+9)%12)+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
