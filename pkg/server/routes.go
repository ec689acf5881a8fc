package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"kcore.dev/kcore/pkg/apiv1"
)

// consistency says where a route is answered.
type consistency int

const (
	// anyReplica: answered by the replica that received it (health, metrics).
	anyReplica consistency = iota
	// leaderRead: forwarded to the leader, which confirms its leadership,
	// unless ?stale=true lets any replica answer from local state.
	leaderRead
	// leaderWrite: always answered by the leader.
	leaderWrite
)

// route is one entry of the routing table. Nothing outside the table is
// reachable.
type route struct {
	// pattern is the http.ServeMux pattern; it is also the route's name in
	// metrics and audit entries.
	pattern string
	// action names what the route does, in audit entries and kctl audit.
	action string
	// roles may call the route besides cluster-admin, which may call all.
	roles []string
	// anyRole lets every known role call the route.
	anyRole bool
	// anonymous lets callers without a certificate in (the handler
	// authenticates them otherwise, e.g. by join token).
	anonymous bool
	// refuse, when set, may refuse a call before the role check, whatever
	// the caller's role (an authenticated caller's refusal is audited like
	// any other on the route).
	refuse func(*call) error
	// ownNode limits role node to the node named by the {id} path value.
	ownNode bool
	// expiredNode lets a node whose certificate expired within the grace
	// call the route for its own id (the renew route, and only it).
	expiredNode bool
	// mode says which replica answers.
	mode consistency
	// audit commits an audit entry for every call (refused calls with 403
	// are audited on every route).
	audit bool
	// maxBody overrides the server's body limit.
	maxBody int64
	// handle serves the call.
	handle func(*call) (any, error)
}

// routes is the routing table.
func (s *Server) routes(reg *prometheus.Registry) []*route {
	metricsHandler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	readers := []string{apiv1.RoleViewer, apiv1.RoleOperator}
	nodes := []string{apiv1.RoleNode}
	operators := []string{apiv1.RoleOperator}
	return []*route{
		{pattern: "GET /v1/health", action: "health", anyRole: true, mode: anyReplica, handle: s.health},
		{pattern: "GET /metrics", action: "metrics", anyRole: true, mode: anyReplica, handle: func(c *call) (any, error) {
			c.wrote = true
			metricsHandler.ServeHTTP(c.w, c.r)
			return nil, nil
		}},
		{pattern: "GET /v1/objects/{kind}", action: "list", roles: readers, mode: leaderRead, handle: s.listObjects},
		{pattern: "GET /v1/objects/{kind}/{name...}", action: "get", roles: readers, mode: leaderRead, handle: s.getObject},
		{pattern: "PUT /v1/objects/{kind}/{name...}", action: "put", refuse: planOnly, mode: leaderWrite, audit: true, handle: s.putObject},
		{pattern: "DELETE /v1/objects/{kind}/{name...}", action: "delete", refuse: planOnly, mode: leaderWrite, audit: true, handle: s.deleteObject},
		{pattern: "POST /v1/updates/{name}/approve", action: "approve update", roles: operators, mode: leaderWrite, audit: true, handle: s.updateAction(apiv1.UpdateApprove)},
		{pattern: "POST /v1/updates/{name}/pause", action: "pause update", roles: operators, mode: leaderWrite, audit: true, handle: s.updateAction(apiv1.UpdatePause)},
		{pattern: "POST /v1/updates/{name}/resume", action: "resume update", roles: operators, mode: leaderWrite, audit: true, handle: s.updateAction(apiv1.UpdateResume)},
		{pattern: "POST /v1/updates/{name}/rollback", action: "roll back update", roles: operators, mode: leaderWrite, audit: true, handle: s.updateAction(apiv1.UpdateRollback)},
		{pattern: "GET /v1/nodes/{id}/state", action: "read node state", roles: []string{apiv1.RoleNode, apiv1.RoleViewer, apiv1.RoleOperator}, ownNode: true, mode: leaderRead, handle: s.nodeState},
		{pattern: "PUT /v1/nodes/{id}/facts", action: "report facts", roles: nodes, ownNode: true, mode: leaderWrite, audit: true, handle: s.putFacts},
		{pattern: "POST /v1/nodes/{id}/heartbeat", action: "heartbeat", roles: nodes, ownNode: true, mode: leaderWrite, handle: s.heartbeat},
		{pattern: "PUT /v1/nodes/{id}/report", action: "report applied state", roles: nodes, ownNode: true, mode: leaderWrite, audit: true, maxBody: MaxReportBody, handle: s.putReport},
		{pattern: "POST /v1/nodes/{id}/renew", action: "renew node certificate", roles: nodes, ownNode: true, expiredNode: true, mode: leaderWrite, audit: true, handle: s.renewNodeCert},
		{pattern: "POST /v1/join", action: "join", anonymous: true, mode: leaderWrite, audit: true, handle: s.join},
		{pattern: "POST /v1/tokens", action: "create join token", mode: leaderWrite, audit: true, handle: s.createToken},
		{pattern: "POST /v1/certs", action: "issue certificate", mode: leaderWrite, audit: true, handle: s.issueCert},
		{pattern: "POST /v1/revocations", action: "revoke certificate", mode: leaderWrite, audit: true, handle: s.revokeCert},
		{pattern: "GET /v1/members", action: "list members", roles: readers, mode: leaderRead, handle: s.listMembers},
		{pattern: "POST /v1/members", action: "add member", roles: []string{apiv1.RoleController}, mode: leaderWrite, audit: true, handle: s.addMember},
		{pattern: "PUT /v1/members/{id}", action: "record member", roles: []string{apiv1.RoleController}, mode: leaderWrite, audit: true, maxBody: MaxMemberBody, handle: s.recordOwnMember},
		{pattern: "DELETE /v1/members/{id}", action: "remove member", mode: leaderWrite, audit: true, handle: s.removeMember},
		{pattern: "GET /v1/snapshot", action: "save snapshot", mode: leaderRead, handle: s.saveSnapshot},
		{pattern: "PUT /v1/snapshot", action: "restore snapshot", mode: leaderWrite, audit: true, maxBody: MaxSnapshotBody, handle: s.restoreSnapshot},
		{pattern: "GET /v1/audit", action: "read audit", roles: readers, mode: leaderRead, handle: s.listAudit},
		{pattern: summaryRoute, action: summaryAction, roles: []string{apiv1.RoleController}, mode: leaderWrite, audit: true, handle: s.postSummary},
		{pattern: "POST /v1/plan", action: "plan", roles: readers, mode: leaderRead, handle: s.planPost},
		{pattern: "POST /v1/apply", action: "apply", roles: []string{apiv1.RoleOperator}, mode: leaderWrite, audit: true, handle: s.applyPost},
		{pattern: "POST /v1/clusters/{name}/etcd/snapshots", action: "take etcd snapshot", roles: []string{apiv1.RoleOperator}, mode: leaderWrite, audit: true, handle: s.takeEtcdSnapshot},
		{pattern: "GET /v1/clusters/{name}/etcd/snapshots", action: "list etcd snapshots", roles: readers, mode: leaderRead, handle: s.listEtcdSnapshots},
		{pattern: "GET /v1/clusters/{name}/etcd/snapshots/{snapshot}", action: "export etcd snapshot", roles: operators, mode: leaderWrite, audit: true, handle: s.exportEtcdSnapshot},
		{pattern: "GET /v1/clusters/{name}/etcd/snapshots/{snapshot}/file", action: "send etcd snapshot file", roles: []string{apiv1.RoleController}, mode: anyReplica, handle: s.etcdSnapshotFile},
		{pattern: "POST /v1/clusters/{name}/etcd/snapshots/import", action: "import etcd snapshot", roles: operators, mode: leaderWrite, audit: true, maxBody: MaxEtcdSnapshotBody, handle: s.importEtcdSnapshot},
		{pattern: "POST /v1/clusters/{name}/kubeconfig", action: "issue kubeconfig", mode: leaderWrite, audit: true, handle: s.kubeconfig},
		{pattern: "GET /v1/gitops", action: "list git sources", roles: readers, mode: leaderRead, handle: s.listGitSources},
		{pattern: "GET /v1/gitops/{name}", action: "read git source", roles: readers, mode: leaderRead, handle: s.getGitSource},
		{pattern: "PUT /v1/gitops/{name}", action: "add git source", mode: leaderWrite, audit: true, handle: s.putGitSource},
		{pattern: "DELETE /v1/gitops/{name}", action: "remove git source", mode: leaderWrite, audit: true, handle: s.deleteGitSource},
		{pattern: "POST /v1/gitops/{name}/sync", action: "sync git source", roles: []string{apiv1.RoleOperator}, mode: leaderWrite, audit: true, handle: s.syncGitSource},
		{pattern: "POST /v1/gitops/{name}/approve", action: "approve git commit", mode: leaderWrite, audit: true, handle: s.approveGitSource},
		{pattern: "POST /v1/clusters/{name}/etcd/restore", action: "restore etcd", roles: []string{apiv1.RoleOperator}, mode: leaderWrite, audit: true, handle: s.restoreEtcd},
	}
}

// buildMux registers the routing table and a JSON 404 for everything else.
func (s *Server) buildMux(reg *prometheus.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range s.routes(reg) {
		mux.Handle(rt.pattern, s.refuseRevoked(s.wrap(rt)))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		id, forwarded := s.identify(r)
		anonymous := id == nil && !forwarded
		if anonymous && !s.admitAnonymous(w, r, nil) {
			return
		}
		writeError(w, notFound("no route %s %s", r.Method, r.URL.Path))
		if anonymous {
			s.anonymousFailed(sourceOf(r), nil, http.StatusNotFound)
		}
	})
	return mux
}

// allows reports whether role may call rt (before the per-object checks
// handlers make).
func (rt *route) allows(role string) bool {
	if role == apiv1.RoleClusterAdmin {
		return true
	}
	if !knownRole(role) {
		return false
	}
	if rt.anyRole {
		return true
	}
	for _, r := range rt.roles {
		if r == role {
			return true
		}
	}
	return false
}
