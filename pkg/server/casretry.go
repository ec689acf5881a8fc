package server

import (
	"errors"
	"fmt"

	"kcore.dev/kcore/pkg/store"
)

// casAttempts bounds how often a route that reads an object and
// compare-and-sets it tries: another write to the object (the
// orchestrator's status) may commit between its read and its put.
const casAttempts = 3

// attemptID is the request id attempt n (from 1) of a call runs under: the
// caller's own for the first, derived from it for the others ("ID.2"), so
// a retry of the whole call replays the same attempts. "" stays "".
func attemptID(reqID string, n int) string {
	if reqID == "" || n == 1 {
		return reqID
	}
	return fmt.Sprintf("%s.%d", reqID, n)
}

// retryCAS runs attempt until it does not lose a compare-and-set race, at
// most casAttempts times, each under its attemptID. attempt reads the
// object afresh each time; the last conflict is returned as it is.
func retryCAS(c *call, attempt func() (any, error)) (any, error) {
	reqID := c.clientReqID
	defer func() { c.clientReqID = reqID }()
	for n := 1; ; n++ {
		c.clientReqID = attemptID(reqID, n)
		out, err := attempt()
		if errors.Is(err, store.ErrConflict) && n < casAttempts {
			continue
		}
		return out, err
	}
}
