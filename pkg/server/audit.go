package server

import (
	"encoding/json"
	"strconv"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// defaultAuditLimit is how many entries GET /v1/audit returns without ?limit.
const defaultAuditLimit = 1000

// listAudit answers audit entries in commit order, filtered by ?since
// (RFC 3339) and ?object (kind/name, or kind alone), the newest ?limit kept.
func (s *Server) listAudit(c *call) (any, error) {
	q := c.r.URL.Query()
	var since time.Time
	if v := q.Get(apiv1.ParamSince); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, badRequest("parse %s=%q: want RFC 3339", apiv1.ParamSince, v)
		}
		since = t
	}
	limit := defaultAuditLimit
	if v := q.Get(apiv1.ParamLimit); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, badRequest("parse %s=%q: want a positive number", apiv1.ParamLimit, v)
		}
		limit = n
	}
	object := q.Get(apiv1.ParamObject)
	idx, err := s.block(c, apiv1.KindAudit, "")
	if err != nil {
		return nil, err
	}
	out := []apiv1.AuditEntry{}
	for _, o := range s.backend.State().List(apiv1.KindAudit) {
		var e apiv1.AuditEntry
		if err := json.Unmarshal(o.Data, &e); err != nil {
			continue
		}
		if !since.IsZero() {
			t, err := time.Parse(time.RFC3339Nano, e.Time)
			if err != nil || t.Before(since) {
				continue
			}
		}
		if object != "" && e.Object != object && !hasKindPrefix(e.Object, object) {
			continue
		}
		out = append(out, e)
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	setIndex(c.w, idx)
	return out, nil
}

// hasKindPrefix reports whether object "kind/name" is of kind filter (a
// filter without a slash names a kind).
func hasKindPrefix(object, filter string) bool {
	for i := 0; i < len(filter); i++ {
		if filter[i] == '/' {
			return false
		}
	}
	return len(object) > len(filter) && object[:len(filter)] == filter && object[len(filter)] == '/'
}
