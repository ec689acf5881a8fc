package server

import (
	"context"
	"strconv"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// block serves the blocking-query parameters of a GET: with ?index=N it
// waits until the object (kind, name) — or the whole kind when name is "" —
// changes past N, or ?wait (default and cap apiv1.MaxWait) runs out. It
// returns the index to answer with, never 0: a kind nothing was written to
// yet answers 1, so a client that sends it back blocks instead of spinning.
func (s *Server) block(c *call, kind, name string) (uint64, error) {
	idx, err := s.wait(c, kind, name)
	return max(idx, 1), err
}

func (s *Server) wait(c *call, kind, name string) (uint64, error) {
	st := s.backend.State()
	q := c.r.URL.Query()
	v := q.Get(apiv1.ParamIndex)
	if v == "" {
		return st.KeyIndex(kind, name), nil
	}
	after, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, badRequest("parse %s=%q: %v", apiv1.ParamIndex, v, err)
	}
	wait := apiv1.DefaultWait
	if w := q.Get(apiv1.ParamWait); w != "" {
		d, err := time.ParseDuration(w)
		if err != nil || d <= 0 {
			return 0, badRequest("parse %s=%q: want a positive duration such as 30s", apiv1.ParamWait, w)
		}
		wait = min(d, apiv1.MaxWait)
	}
	ctx, cancel := context.WithTimeout(c.r.Context(), wait)
	defer cancel()
	return st.Wait(ctx, kind, name, after)
}
