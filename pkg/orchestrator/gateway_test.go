package orchestrator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"kcore.dev/kcore/pkg/api"
)

// fakeGateway stands in for etcd's v3 JSON gateway membership calls: it
// keeps a member list and records every call as "verb arg".
type fakeGateway struct {
	mu      sync.Mutex
	next    uint64
	members []gatewayMember
	calls   []string
	// refuse makes promote fail (a learner not caught up yet).
	refuse atomic.Bool
	// lag is how far every member's applied index trails the raft index
	// /v3/maintenance/status reports.
	lag atomic.Int64
}

func newFakeGateway() *fakeGateway { return &fakeGateway{next: 100} }

// seed sets the voting members, one per node id and address.
func (g *fakeGateway) seed(nodes map[string]string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.members = nil
	for id, addr := range nodes {
		g.next++
		g.members = append(g.members, gatewayMember{ID: memberID(g.next), Name: id, PeerURLs: []string{peerURL(&api.KubernetesCluster{}, addr)}})
	}
}

func (g *fakeGateway) log() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.calls...)
}

func (g *fakeGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r.Method != http.MethodPost {
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	var in struct {
		ID        string   `json:"ID"`
		PeerURLs  []string `json:"peerURLs"`
		IsLearner bool     `json:"isLearner"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	verb := strings.TrimPrefix(r.URL.Path, "/v3/cluster/member/")
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	find := func() int {
		for i, m := range g.members {
			if strconv.FormatUint(uint64(m.ID), 10) == in.ID {
				return i
			}
		}
		return -1
	}
	switch verb {
	case "/v3/maintenance/status":
		reply(map[string]any{"leader": "101", "raftIndex": "100000", "raftAppliedIndex": strconv.FormatInt(100000-g.lag.Load(), 10)})
		return
	case "list":
		reply(map[string]any{"members": g.members})
		return
	case "add":
		g.calls = append(g.calls, fmt.Sprintf("add %s learner=%v", strings.Join(in.PeerURLs, ","), in.IsLearner))
		g.next++
		m := gatewayMember{ID: memberID(g.next), PeerURLs: in.PeerURLs, IsLearner: in.IsLearner}
		g.members = append(g.members, m)
		reply(map[string]any{"member": m, "members": g.members})
	case "promote":
		i := find()
		if i < 0 || g.refuse.Load() {
			http.Error(w, `{"error":"etcdserver: can only promote a learner member which is in sync with leader","code":9}`, http.StatusInternalServerError)
			return
		}
		g.calls = append(g.calls, "promote "+peerOrName(g.members[i]))
		g.members[i].IsLearner = false
		reply(map[string]any{"members": g.members})
	case "remove":
		i := find()
		if i < 0 {
			http.Error(w, `{"error":"etcdserver: member not found","code":5}`, http.StatusNotFound)
			return
		}
		g.calls = append(g.calls, "remove "+peerOrName(g.members[i]))
		g.members = append(g.members[:i], g.members[i+1:]...)
		reply(map[string]any{"members": g.members})
	default:
		http.NotFound(w, r)
	}
}

func peerOrName(m gatewayMember) string {
	if m.Name != "" {
		return m.Name
	}
	return strings.Join(m.PeerURLs, ",")
}
