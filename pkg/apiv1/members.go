package apiv1

import (
	"encoding/json"

	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
)

// ControllerReplicas decodes the stored Member objects into the replicas a
// ClusterUpdate's schema gates are checked against, by raft id. A replica
// that recorded no schema, or whose record does not decode, has Schema 0:
// every gate set blocks on it.
func ControllerReplicas(members []store.Object) []rollout.ControllerReplica {
	out := make([]rollout.ControllerReplica, 0, len(members))
	for _, o := range members {
		var m MemberData
		if err := json.Unmarshal(o.Data, &m); err != nil {
			m = MemberData{}
		}
		out = append(out, rollout.ControllerReplica{ID: o.Name, Schema: m.Schema})
	}
	return out
}
