package api

import (
	"errors"
	"strings"
	"testing"
)

func TestNodeID(t *testing.T) {
	for id, want := range map[string]bool{
		"n1": true, "node-105": true, "a": true, "0": true, strings.Repeat("a", MaxNodeIDLen): true,
		"": false, ".": false, "..": false, "-": false, "-a": false, "a-": false, ".a": false, "a.": false,
		"a.b": false, "a/b": false, "A": false, "a_b": false, "a b": false, strings.Repeat("a", MaxNodeIDLen+1): false,
	} {
		if got := IsNodeID(id); got != want {
			t.Errorf("IsNodeID(%q) = %v, want %v", id, got, want)
		}
		if err := CheckNodeID(id); (err == nil) != want || (err != nil && !errors.Is(err, ErrInvalidNodeID)) {
			t.Errorf("CheckNodeID(%q) = %v", id, err)
		}
	}
}

// TestManifestNodeIDsUseTheOneChecker: manifests and ClusterUpdates refuse
// the ids the API refuses.
func TestManifestNodeIDsUseTheOneChecker(t *testing.T) {
	for _, id := range []string{"..", "-", "a-", "a.b"} {
		u := ClusterUpdate{Kind: KindClusterUpdate, Metadata: ObjectMeta{Name: "u1"}, Spec: UpdateSpec{Version: "0.5.0", Nodes: []string{id}}}
		if !strings.Contains(u.Validate().Error(), "spec.nodes[0]") {
			t.Errorf("ClusterUpdate node %q accepted", id)
		}
	}
}
