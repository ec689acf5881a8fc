package apiv1

import "encoding/json"

// Object is one stored object as the API returns it.
type Object struct {
	// Kind of the object, e.g. KubernetesCluster.
	Kind string `json:"kind"`
	// Name within its kind.
	Name string `json:"name"`
	// CreateIndex is the raft index that created it.
	CreateIndex uint64 `json:"createIndex"`
	// ModifyIndex is the raft index that last changed it.
	ModifyIndex uint64 `json:"modifyIndex"`
	// CreateTime is the leader's RFC 3339 stamp of creation.
	CreateTime string `json:"createTime,omitempty"`
	// ModifyTime is the leader's RFC 3339 stamp of the last change.
	ModifyTime string `json:"modifyTime,omitempty"`
	// Data is the object's JSON; omitted for kinds never returned with data.
	Data json.RawMessage `json:"data,omitempty"`
}

// List is the answer to a list GET.
type List struct {
	// Index is the kind's index (the X-Kcore-Index header carries it too).
	Index uint64 `json:"index"`
	// Items are the objects sorted by name.
	Items []Object `json:"items"`
}

// WriteResponse answers a PUT, DELETE or POST that went through raft.
type WriteResponse struct {
	// Index is the raft index the write was applied at.
	Index uint64 `json:"index"`
}

// Raft roles of a replica in Health.Role.
const (
	StateLeader    = "leader"
	StateFollower  = "follower"
	StateCandidate = "candidate"
	StateShutdown  = "shutdown"
)

// Health is GET /v1/health.
type Health struct {
	// Role is leader, follower, candidate or shutdown.
	Role string `json:"role"`
	// ID is this replica's raft id.
	ID string `json:"id"`
	// Leader is the leader's raft id, "" when none is known.
	Leader string `json:"leader"`
	// LeaderAddr is the leader's HTTP address (host:port), "" when unknown.
	LeaderAddr string `json:"leaderAddr"`
	// LastIndex is the last raft log index on this replica.
	LastIndex uint64 `json:"lastIndex"`
	// AppliedIndex is the last index applied to the state.
	AppliedIndex uint64 `json:"appliedIndex"`
	// Peers are the raft configuration's servers.
	Peers []Member `json:"peers"`
	// Schema is the store schema this replica writes.
	Schema int `json:"schema"`
}

// Member is one controller replica in GET /v1/members.
type Member struct {
	// ID is the raft server id.
	ID string `json:"id"`
	// RaftAddr is the raft transport address.
	RaftAddr string `json:"raftAddr"`
	// HTTPAddr is the API address, "" when the member never recorded one.
	HTTPAddr string `json:"httpAddr"`
	// Suffrage is Voter, Nonvoter or Staging.
	Suffrage string `json:"suffrage"`
	// Leader is true for the current leader.
	Leader bool `json:"leader"`
	// RecordedSchema is the controller schema the replica recorded that it
	// reads and writes (when it joined, started, saw a new leader or
	// became leader): what ClusterUpdate schema gates compare. 0 when it
	// recorded none.
	RecordedSchema int `json:"recordedSchema"`
}

// MemberData is the data of a stored KindMember object.
type MemberData struct {
	// RaftAddr is the raft transport address.
	RaftAddr string `json:"raftAddr"`
	// HTTPAddr is the API address.
	HTTPAddr string `json:"httpAddr"`
	// Schema is the controller schema (version.Schema) the replica reads
	// and writes, as it last recorded it (when it joined, started, saw a
	// new leader or became leader); 0 for a replica that recorded none.
	Schema int `json:"schema,omitempty"`
}

// AddMemberRequest is POST /v1/members: add a voter.
type AddMemberRequest struct {
	// ID is the new replica's raft id.
	ID string `json:"id"`
	// RaftAddr is its raft transport address.
	RaftAddr string `json:"raftAddr"`
	// HTTPAddr is its API address.
	HTTPAddr string `json:"httpAddr"`
	// Schema is the controller schema the new replica reads and writes.
	Schema int `json:"schema,omitempty"`
}

// RecordMemberRequest is PUT /v1/members/{id}: a controller replica
// already in the raft configuration records its own Member object (on
// every start and leader change), so the leader knows the schema it reads
// without it having to lead. It never adds or moves a server.
type RecordMemberRequest struct {
	// RaftAddr is the replica's raft transport address; it must be the one
	// the raft configuration holds for it.
	RaftAddr string `json:"raftAddr"`
	// HTTPAddr is its API address.
	HTTPAddr string `json:"httpAddr"`
	// Schema is the controller schema the replica reads and writes.
	Schema int `json:"schema"`
}

// JoinRequest is POST /v1/join: a node exchanges a join token for its certificate.
type JoinRequest struct {
	// Token is the one-time join token.
	Token string `json:"token"`
	// NodeID is the node's id; it becomes the certificate's CommonName.
	NodeID string `json:"nodeId"`
	// CSR is reserved for a PEM certificate request; when empty the
	// controller generates the key.
	CSR string `json:"csr,omitempty"`
}

// JoinResponse answers POST /v1/join.
type JoinResponse struct {
	// Cert is the node's PEM certificate (role node, CN = node id).
	Cert string `json:"cert"`
	// Key is the node's PEM private key.
	Key string `json:"key"`
	// CA is the controller CA's PEM certificate.
	CA string `json:"ca"`
}

// TokenRequest is POST /v1/tokens.
type TokenRequest struct {
	// NodeID is the one node id the token may register. Required.
	NodeID string `json:"nodeId"`
	// Rekey makes a token that re-keys an already registered node: joining
	// with it revokes every earlier certificate of the node. Without it the
	// token only registers a node that is not registered yet.
	Rekey bool `json:"rekey,omitempty"`
	// TTL is a Go duration (e.g. 24h) between MinTokenTTL and MaxTokenTTL;
	// empty means DefaultTokenTTL.
	TTL string `json:"ttl,omitempty"`
}

// TokenResponse answers POST /v1/tokens.
type TokenResponse struct {
	// Token is the one-time join token; the controller keeps only its hash.
	Token string `json:"token"`
	// Expires is when it stops working, RFC 3339.
	Expires string `json:"expires"`
	// NodeID is the node id the token is bound to.
	NodeID string `json:"nodeId"`
	// Rekey is set on a re-key token.
	Rekey bool `json:"rekey,omitempty"`
}

// RevokeRequest is POST /v1/revocations: revoke one issued certificate.
type RevokeRequest struct {
	// Serial is the certificate's serial number in hex (as `openssl x509
	// -serial` or the Credential records show it; case and colons ignored).
	Serial string `json:"serial"`
}

// RevokeResponse answers POST /v1/revocations.
type RevokeResponse struct {
	// Serial is the revoked serial, normalized to lowercase hex.
	Serial string `json:"serial"`
	// Subject is the revoked certificate's CommonName.
	Subject string `json:"subject"`
	// Role is the revoked certificate's role.
	Role string `json:"role"`
	// NotAfter is when the certificate expires anyway (RFC 3339); the
	// revocation is dropped after it.
	NotAfter string `json:"notAfter"`
}

// CertRequest is POST /v1/certs: a certificate for a person.
type CertRequest struct {
	// Role is viewer, operator or cluster-admin.
	Role string `json:"role"`
	// Name becomes the certificate's CommonName.
	Name string `json:"name"`
}

// CertResponse answers POST /v1/certs.
type CertResponse struct {
	// Cert is the PEM certificate.
	Cert string `json:"cert"`
	// Key is the PEM private key.
	Key string `json:"key"`
	// CA is the controller CA's PEM certificate.
	CA string `json:"ca"`
}

// AuditEntry is one audited call, returned by GET /v1/audit.
type AuditEntry struct {
	// Time is the leader's RFC 3339 stamp.
	Time string `json:"time"`
	// ID is a unique request id.
	ID string `json:"id"`
	// Subject is the caller's certificate CommonName ("" for anonymous join).
	Subject string `json:"subject"`
	// Role is the caller's role.
	Role string `json:"role"`
	// Method is the HTTP method.
	Method string `json:"method"`
	// Route is the routing-table pattern, e.g. "PUT /v1/objects/{kind}/{name...}".
	Route string `json:"route"`
	// Action names what the call did: the route's action ("apply", "join",
	// "put", "approve update", …). Entries written before the update
	// action routes existed may hold the bare intent a ClusterUpdate write
	// declared ("approve", "pause", …); empty in entries written before
	// actions were recorded.
	Action string `json:"action,omitempty"`
	// Object is "kind/name" when the call names one.
	Object string `json:"object,omitempty"`
	// PlanHash is the plan's hash when the call carried one.
	PlanHash string `json:"planHash,omitempty"`
	// Commit is the git commit a GitSource applied, on its entries.
	Commit string `json:"commit,omitempty"`
	// Result is the HTTP status answered.
	Result int `json:"result"`
	// Code is the error code when the call failed, "" on success.
	Code string `json:"code,omitempty"`
	// Summary, on a summary entry, counts the anonymous failures one
	// replica answered during an interval (they are never audited one by
	// one).
	Summary *AnonymousSummary `json:"summary,omitempty"`
}

// Reasons an anonymous request failed, the keys of AnonymousSummary.Reasons
// and the reason label of kcore_anonymous_failures_total.
const (
	// ReasonBadRequest: malformed or invalid body (400).
	ReasonBadRequest = "bad-request"
	// ReasonJoinRefused: a join token that is invalid, expired or used (401 on join).
	ReasonJoinRefused = "join-refused"
	// ReasonUnauthenticated: no client certificate on a route that needs one (401).
	ReasonUnauthenticated = "unauthenticated"
	// ReasonTooLarge: a body over the limit (413).
	ReasonTooLarge = "too-large"
	// ReasonRateLimited: the source was over its rate (429).
	ReasonRateLimited = "rate-limited"
	// ReasonOther: any other failure (404, 5xx).
	ReasonOther = "other"
)

// AnonymousSummary counts the failed requests without a client certificate
// that one replica answered between Since and Until.
type AnonymousSummary struct {
	// Replica is the raft id of the replica that answered them.
	Replica string `json:"replica"`
	// Since and Until bound the interval (RFC 3339, the replica's clock).
	Since string `json:"since"`
	Until string `json:"until"`
	// Total is the number of failed requests.
	Total uint64 `json:"total"`
	// Reasons counts them by Reason* constant.
	Reasons map[string]uint64 `json:"reasons"`
	// TopSources are the sources (IPv4 address or IPv6 /64) that sent the
	// most, most first.
	TopSources []SourceCount `json:"topSources,omitempty"`
	// Sources is how many distinct sources were counted; OtherSources the
	// failures from sources beyond the tracked bound, not attributed.
	Sources      int    `json:"sources"`
	OtherSources uint64 `json:"otherSources,omitempty"`
}

// SourceCount is one source's number of failed requests.
type SourceCount struct {
	// Source is an IPv4 address or an IPv6 /64 prefix.
	Source string `json:"source"`
	// Count is its number of failed requests.
	Count uint64 `json:"count"`
}

// KubeconfigRequest is the body of POST /v1/clusters/{name}/kubeconfig.
type KubeconfigRequest struct {
	// TTL is the client certificate's lifetime, a Go duration from
	// MinKubeconfigTTL to MaxKubeconfigTTL; empty means DefaultKubeconfigTTL.
	TTL string `json:"ttl,omitempty"`
}

// KubeconfigResponse is a kubeconfig for one cluster and the caller.
type KubeconfigResponse struct {
	// Kubeconfig is the file, with the client key inline.
	Kubeconfig string `json:"kubeconfig"`
	// User is the Kubernetes user name the certificate carries.
	User string `json:"user"`
	// Groups are its Kubernetes groups.
	Groups []string `json:"groups"`
	// Expires is the certificate's expiry, RFC 3339.
	Expires string `json:"expires"`
}

// Update actions: the steps of POST /v1/updates/{name}/{action}, each a
// transition of the rollout state machine (pkg/rollout) the controller
// makes on the stored ClusterUpdate.
const (
	// UpdateApprove sets spec.approve and moves a pending update to approved.
	UpdateApprove = "approve"
	// UpdatePause records a pause: no new step starts.
	UpdatePause = "pause"
	// UpdateResume continues a paused update.
	UpdateResume = "resume"
	// UpdateRollback asks the roller to revert the steps that ran.
	UpdateRollback = "rollback"
)

// UpdateActions are the actions of POST /v1/updates/{name}/{action}: the
// kctl update commands that change a stored ClusterUpdate.
func UpdateActions() []string {
	return []string{UpdateApprove, UpdatePause, UpdateResume, UpdateRollback}
}

// UpdateActionResponse answers POST /v1/updates/{name}/{action}.
type UpdateActionResponse struct {
	// Index is the raft index the change was applied at.
	Index uint64 `json:"index"`
	// From is the update's phase before the action ("" when the answer
	// replays an earlier call with the same request id).
	From string `json:"from,omitempty"`
	// Phase is the update's phase after the action.
	Phase string `json:"phase"`
}
