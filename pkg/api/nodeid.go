package api

import (
	"errors"
	"fmt"
)

// MaxNodeIDLen is the longest node id: a node id is a DNS label.
const MaxNodeIDLen = 63

// NodeIDRule says in words what IsNodeID accepts, for error messages.
const NodeIDRule = "lowercase letters, digits and '-', at most 63, starting and ending with a letter or digit"

// ErrInvalidNodeID is wrapped by CheckNodeID's errors.
var ErrInvalidNodeID = errors.New("invalid node id")

// IsNodeID reports whether s is a valid node id. It is the one node id
// check: manifests, ClusterUpdates, join tokens, joins and certificate
// renewals all use it, so an id one accepts is never refused by another.
// A node id is a DNS label; ".", "..", "-" and ids that start or end with
// '-' or '.' are refused (ids name paths, certificates and store keys).
func IsNodeID(s string) bool { return IsDNSLabel(s) }

// CheckNodeID returns nil for a valid node id and an error wrapping
// ErrInvalidNodeID that quotes it otherwise.
func CheckNodeID(s string) error {
	if s == "" {
		return fmt.Errorf("%w: node id is required", ErrInvalidNodeID)
	}
	if !IsNodeID(s) {
		return fmt.Errorf("%w %q: want %s", ErrInvalidNodeID, s, NodeIDRule)
	}
	return nil
}

// checkNodeID reports an error at path unless id is a valid node id; it
// returns whether it is.
func checkNodeID(v *collector, path, id string) bool {
	if id == "" {
		v.errorf(path, "required")
		return false
	}
	if !IsNodeID(id) {
		v.errorf(path, "%q is not a DNS label (%s)", id, NodeIDRule)
		return false
	}
	return true
}
