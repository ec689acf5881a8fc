package server

import (
	"kcore.dev/kcore/pkg/apiv1"
)

// readRequestID reads and checks the call's apiv1.HeaderRequestID. An
// absent header means the write is not deduplicated (older clients); an
// anonymous caller's id is ignored, because ids are remembered per caller.
func (c *call) readRequestID() error {
	v := c.r.Header.Get(apiv1.HeaderRequestID)
	if v == "" || c.id == nil {
		return nil
	}
	if err := validRequestID(v); err != nil {
		return err
	}
	c.clientReqID = v
	return nil
}

// validRequestID checks an id's length and characters.
func validRequestID(v string) error {
	if len(v) < apiv1.MinRequestIDLen || len(v) > apiv1.MaxRequestIDLen {
		return badRequest("%s must be %d to %d characters, not %d", apiv1.HeaderRequestID, apiv1.MinRequestIDLen, apiv1.MaxRequestIDLen, len(v))
	}
	for i := 0; i < len(v); i++ {
		switch ch := v[i]; {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9', ch == '-', ch == '_', ch == '.':
		default:
			return badRequest("%s may hold only ASCII letters, digits, '-', '_' and '.'", apiv1.HeaderRequestID)
		}
	}
	return nil
}

// caller names the call's identity in the request table: role and subject,
// so the same name under two roles is two callers.
func (c *call) caller() string {
	return c.role() + "/" + c.subject()
}
