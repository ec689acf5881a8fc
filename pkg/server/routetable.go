package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"kcore.dev/kcore/pkg/apiv1"
)

// Modes of RouteInfo: which replica answers a route.
const (
	ModeAnyReplica  = "any replica"
	ModeLeaderRead  = "leader read"
	ModeLeaderWrite = "leader write"
)

// RouteInfo describes one route of the API's routing table, for
// documentation (docs/security.md is generated from RouteTable).
type RouteInfo struct {
	// Pattern is "METHOD /path"; {id} and {name} are path values.
	Pattern string
	// Action is the route's name in audit entries and kctl audit.
	Action string
	// Roles are the certificate roles that may call the route, in the
	// order of Roles(); cluster-admin may call every route.
	Roles []string
	// Anonymous lets callers without a client certificate in (the handler
	// authenticates them otherwise).
	Anonymous bool
	// OwnNode limits role node to the node named by {id}.
	OwnNode bool
	// ExpiredNode lets the node named by {id} in with a certificate that
	// expired within the grace (Config.NodeCertGrace).
	ExpiredNode bool
	// Mode is ModeAnyReplica, ModeLeaderRead (any replica with ?stale=true)
	// or ModeLeaderWrite.
	Mode string
	// Audit is set when every call is audited (refusals with 403 are
	// audited on every route).
	Audit bool
	// MaxBody is the request body limit in bytes.
	MaxBody int64
}

// Roles are the roles the API knows, most powerful first.
func Roles() []string {
	return []string{apiv1.RoleClusterAdmin, apiv1.RoleOperator, apiv1.RoleViewer, apiv1.RoleNode, apiv1.RoleController}
}

// RouteTable returns the routing table as it is served, in table order,
// with the body limits of a server configured with the default MaxBody.
func RouteTable() []RouteInfo {
	s := &Server{}
	var out []RouteInfo
	for _, rt := range s.routes(prometheus.NewRegistry()) {
		ri := RouteInfo{Pattern: rt.pattern, Action: rt.action, Anonymous: rt.anonymous, OwnNode: rt.ownNode, ExpiredNode: rt.expiredNode, Audit: rt.audit, MaxBody: DefaultMaxBody}
		for _, role := range Roles() {
			if rt.allows(role) {
				ri.Roles = append(ri.Roles, role)
			}
		}
		switch rt.mode {
		case anyReplica:
			ri.Mode = ModeAnyReplica
		case leaderRead:
			ri.Mode = ModeLeaderRead
		default:
			ri.Mode = ModeLeaderWrite
		}
		if rt.maxBody > 0 {
			ri.MaxBody = rt.maxBody
		}
		out = append(out, ri)
	}
	return out
}
