package apiv1

import (
	"net/url"
	"time"

	"kcore.dev/kcore/pkg/store"
)

// Roles, taken from a client certificate's first Organization.
const (
	// RoleClusterAdmin may call every route.
	RoleClusterAdmin = "cluster-admin"
	// RoleOperator approves updates and scales, and reads.
	RoleOperator = "operator"
	// RoleViewer reads.
	RoleViewer = "viewer"
	// RoleNode is a node agent: its own state, facts, heartbeat and report.
	RoleNode = "node"
	// RoleController is another controller replica: health, metrics and
	// POST /v1/members (join).
	RoleController = "controller"
)

// Kinds the API layer stores besides the object model's kinds.
const (
	// KindMember records a controller replica: name = raft id, data
	// MemberData. The store reads the recorded schemas to choose the
	// schema the cluster writes.
	KindMember = store.KindMember
	// KindJoinToken records a join token by the SHA-256 of the token.
	KindJoinToken = "JoinToken"
	// KindSecret holds encrypted private material (AES-256-GCM).
	KindSecret = "Secret"
	// KindCredential holds issued credentials; never listed with data.
	KindCredential = "Credential"
	// KindNodeReport holds api.NodeReport objects, name "<cluster>/<node>".
	KindNodeReport = "NodeReport"
	// KindAudit holds AuditEntry objects in commit order.
	KindAudit = "Audit"
	// KindAuditPolicy holds the audit log's retention (one object, written
	// by the leader from its flags; store.AuditRetention).
	KindAuditPolicy = "AuditPolicy"
	// KindRevocation records a revoked certificate by its serial (lowercase
	// hex); every replica refuses a TLS handshake with a revoked certificate.
	KindRevocation = "Revocation"
	// KindNodeIdentity records that a node id holds a certificate (name =
	// node id); joins, re-keys and renewals change it with a CAS, so they
	// are serialized per node.
	KindNodeIdentity = "NodeIdentity"
)

// HTTP headers, query parameters and content types of the API.
const (
	// HeaderIndex is set on every GET: the object's ModifyIndex or the kind's index.
	HeaderIndex = "X-Kcore-Index"
	// HeaderForwarded marks a request a follower forwarded to the leader.
	HeaderForwarded = "X-Kcore-Forwarded-By"
	// HeaderRequestID carries the client's id of a write, the same on every
	// retry of one logical call; the controller applies a write at most
	// once per caller and id while it remembers the id (see
	// MinRequestIDLen, MaxRequestIDLen and docs/controller.md).
	HeaderRequestID = "X-Kcore-Request-Id"
	// HeaderRequestReplayed is "true" on the answer to a write whose
	// request id was already applied: the answer is the first one's and
	// nothing was applied again.
	HeaderRequestReplayed = "X-Kcore-Request-Replayed"
	// ParamIndex is the blocking-query index: return once the result changes past it.
	ParamIndex = "index"
	// ParamWait is the blocking-query wait, a Go duration (e.g. 30s), capped at MaxWait.
	ParamWait = "wait"
	// ParamStale lets any replica answer a read from local state ("true").
	ParamStale = "stale"
	// ParamCAS makes a PUT or DELETE, or an update action, conditional on
	// the object's ModifyIndex (0 on a PUT: must not exist).
	ParamCAS = "cas"
	// ParamSince filters audit entries at or after an RFC 3339 time.
	ParamSince = "since"
	// ParamObject filters audit entries by "kind/name".
	ParamObject = "object"
	// ParamLimit caps the number of audit entries returned (newest kept).
	ParamLimit = "limit"
	// ContentTypeJSON is the type of every JSON body.
	ContentTypeJSON = "application/json"
	// ContentTypeSnapshot is the type of snapshot bodies.
	ContentTypeSnapshot = "application/octet-stream"
)

// Limits.
const (
	// DefaultWait is the wait used when ParamIndex is given without ParamWait.
	DefaultWait = 5 * time.Minute
	// MaxWait caps ParamWait.
	MaxWait = 5 * time.Minute
	// MinRequestIDLen is the shortest HeaderRequestID accepted. Its
	// characters are ASCII letters, digits, '-', '_' and '.'.
	MinRequestIDLen = 16
	// MaxRequestIDLen is the longest HeaderRequestID accepted.
	MaxRequestIDLen = 64
	// DefaultTokenTTL is a join token's lifetime when TokenRequest.TTL is empty.
	DefaultTokenTTL = 24 * time.Hour
	// DefaultKubeconfigTTL is a kubeconfig certificate's lifetime when
	// KubeconfigRequest.TTL is empty.
	DefaultKubeconfigTTL = 8 * time.Hour
	// MinKubeconfigTTL and MaxKubeconfigTTL bound KubeconfigRequest.TTL: a
	// kubeconfig certificate cannot be revoked before it expires, so its
	// life is kept short.
	MinKubeconfigTTL = 5 * time.Minute
	MaxKubeconfigTTL = 7 * 24 * time.Hour
	// MinTokenTTL is the shortest join token lifetime the controller accepts.
	MinTokenTTL = time.Minute
	// MaxTokenTTL is the longest join token lifetime the controller accepts.
	MaxTokenTTL = 7 * 24 * time.Hour
	// DefaultNodeCertValidity is how long a node certificate is valid unless
	// the controller is told otherwise; agents renew at two thirds of it.
	DefaultNodeCertValidity = 24 * time.Hour
)

// Route paths (prefixes for routes with path parameters).
const (
	PathHealth   = "/v1/health"
	PathMetrics  = "/metrics"
	PathObjects  = "/v1/objects/"
	PathNodes    = "/v1/nodes/"
	PathJoin     = "/v1/join"
	PathTokens   = "/v1/tokens"
	PathCerts    = "/v1/certs"
	PathMembers  = "/v1/members"
	PathSnapshot = "/v1/snapshot"
	PathAudit    = "/v1/audit"
	// PathRevocations is POST: revoke a certificate by serial.
	PathRevocations = "/v1/revocations"
	// PathUpdates is the prefix of the ClusterUpdate action routes, POST
	// /v1/updates/{name}/{action} (see UpdateActions and UpdateActionPath).
	PathUpdates = "/v1/updates/"
	// PathAuditSummaries is where a follower hands the leader its summary
	// of anonymous failures (role controller only).
	PathAuditSummaries = "/v1/audit/summaries"
)

// ObjectPath returns /v1/objects/{kind}/{name}, or /v1/objects/{kind} when name is empty.
func ObjectPath(kind, name string) string {
	if name == "" {
		return PathObjects + kind
	}
	return PathObjects + kind + "/" + name
}

// MemberPath returns /v1/members/{id}: PUT records controller replica id's
// own Member object, DELETE removes the replica.
func MemberPath(id string) string {
	return PathMembers + "/" + url.PathEscape(id)
}

// NodePath returns /v1/nodes/{id}/{what} (what: state, facts, heartbeat,
// report, renew).
func NodePath(id, what string) string {
	return PathNodes + id + "/" + what
}

// NodeStateName is the store name of a NodeState or NodeReport: "<cluster>/<node>".
func NodeStateName(cluster, node string) string {
	return cluster + "/" + node
}

// UpdateActionPath returns /v1/updates/{name}/{action}, the route that
// moves a stored ClusterUpdate through one of UpdateActions.
func UpdateActionPath(name, action string) string {
	return PathUpdates + name + "/" + action
}
