package client

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
)

func TestFollowsLeaderOn503(t *testing.T) {
	p := newTestPKI(t)
	var leaderHits, followerHits atomic.Int32
	leader := p.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaderHits.Add(1)
		if len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != "admin" {
			writeError(w, apiv1.CodeUnauthenticated, "no client certificate", nil)
			return
		}
		w.Header().Set(apiv1.HeaderIndex, "7")
		writeJSON(w, 200, apiv1.WriteResponse{Index: 7})
	}))
	follower := p.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		followerHits.Add(1)
		writeError(w, apiv1.CodeNoLeader, "cannot reach the leader", map[string]string{apiv1.DetailLeader: addrOf(leader)})
	}))
	// The leader is not in the configured list: the client learns it from the hint.
	c := p.client(t, "https://"+addrOf(follower))
	ctx := context.Background()
	idx, err := c.Put(ctx, "Probe", "lab", map[string]string{"a": "b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if idx != 7 {
		t.Fatalf("index = %d, want 7", idx)
	}
	if _, err := c.Put(ctx, "Probe", "lab", map[string]string{"a": "c"}, nil); err != nil {
		t.Fatal(err)
	}
	if f, l := followerHits.Load(), leaderHits.Load(); f != 1 || l != 2 {
		t.Fatalf("follower hits %d, leader hits %d; want 1 and 2 (the leader is remembered)", f, l)
	}
}

func TestTriesNextAddressWhenRefused(t *testing.T) {
	p := newTestPKI(t)
	up := p.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			writeJSON(w, 200, apiv1.Health{Role: apiv1.StateLeader, ID: "controller-1", Peers: []apiv1.Member{}})
			return
		}
		writeJSON(w, 200, apiv1.WriteResponse{Index: 9})
	}))
	for _, tc := range []struct {
		name string
		call func(*Client) error
	}{
		{"read", func(c *Client) error {
			h, err := c.Health(context.Background())
			if err == nil && h.ID != "controller-1" {
				t.Errorf("health = %+v", h)
			}
			return err
		}},
		{"write", func(c *Client) error {
			idx, err := c.Put(context.Background(), "Probe", "lab", []byte(`{}`), nil)
			if err == nil && idx != 9 {
				t.Errorf("index = %d", idx)
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(p.client(t, closedAddr(t), addrOf(up))); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestAllUnreachable(t *testing.T) {
	p := newTestPKI(t)
	c := p.client(t, closedAddr(t), closedAddr(t))
	_, err := c.Health(context.Background())
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
}

func TestWaitsOutAnElection(t *testing.T) {
	p := newTestPKI(t)
	var calls atomic.Int32
	srv := p.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 3 {
			writeError(w, apiv1.CodeNoLeader, "no leader elected yet", nil)
			return
		}
		writeJSON(w, 200, []apiv1.Member{{ID: "controller-0", Suffrage: "Voter", Leader: true}})
	}))
	c := p.client(t, addrOf(srv))
	ms, err := c.Members(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || !ms[0].Leader {
		t.Fatalf("members = %+v", ms)
	}
}

func TestNoLeaderGivesUp(t *testing.T) {
	p := newTestPKI(t)
	srv := p.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, apiv1.CodeNoLeader, "no leader elected yet", nil)
	}))
	c, err := New(Config{Addresses: []string{addrOf(srv)}, CA: p.ca.CertPEM, Cert: p.admin.CertPEM, Key: p.admin.KeyPEM, ElectionWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Members(context.Background())
	var apiErr *APIError
	if !errors.Is(err, ErrNoLeader) || !errors.As(err, &apiErr) || apiErr.Status != 503 {
		t.Fatalf("err = %v, want a 503 ErrNoLeader", err)
	}
}

// A write whose connection breaks after it was sent may have been applied:
// one the controller does not deduplicate (AddMember) is not sent to another
// controller. An object write is, with the same request id, because the
// controller applies it at most once per id. A read always is.
func TestBrokenConnectionRetriesOnlyReadsAndOnceWrites(t *testing.T) {
	p := newTestPKI(t)
	var brokenIDs []string
	var mu sync.Mutex
	breaker := p.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		brokenIDs = append(brokenIDs, r.Header.Get(apiv1.HeaderRequestID))
		mu.Unlock()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	var goodHits atomic.Int32
	var goodID atomic.Value
	good := p.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		goodHits.Add(1)
		if r.Method == http.MethodGet {
			writeJSON(w, 200, apiv1.Object{Kind: "KubernetesCluster", Name: "lab", ModifyIndex: 3})
			return
		}
		goodID.Store(r.Header.Get(apiv1.HeaderRequestID))
		writeJSON(w, 200, apiv1.WriteResponse{Index: 4})
	}))
	c := p.client(t, addrOf(breaker), addrOf(good))
	if err := c.AddMember(context.Background(), apiv1.AddMemberRequest{ID: "c9", RaftAddr: "10.0.0.9:7000", HTTPAddr: "10.0.0.9:7443"}); err == nil {
		t.Fatal("membership write over a broken connection succeeded")
	}
	if n := goodHits.Load(); n != 0 {
		t.Fatalf("membership write was resent to another controller (%d hits)", n)
	}

	c = p.client(t, addrOf(breaker), addrOf(good))
	idx, err := c.Put(context.Background(), "Probe", "lab", []byte(`{}`), nil)
	if err != nil || idx != 4 {
		t.Fatalf("object write = %d, %v; want it resent and answered at 4", idx, err)
	}
	mu.Lock()
	sentID := brokenIDs[len(brokenIDs)-1]
	mu.Unlock()
	if got, _ := goodID.Load().(string); len(sentID) != 32 || got != sentID {
		t.Fatalf("resent write carried request id %q, first attempt %q: want the same 128-bit id", got, sentID)
	}

	c = p.client(t, addrOf(breaker), addrOf(good))
	hits := goodHits.Load()
	obj, err := c.Get(context.Background(), "KubernetesCluster", "lab")
	if err != nil {
		t.Fatal(err)
	}
	if obj.ModifyIndex != 3 || goodHits.Load() != hits+1 {
		t.Fatalf("read: %+v, %d hits", obj, goodHits.Load()-hits)
	}
}

func TestRefusesServerFromAnotherCA(t *testing.T) {
	p, other := newTestPKI(t), newTestPKI(t)
	srv := other.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, apiv1.Health{})
	}))
	c := p.client(t, addrOf(srv))
	if _, err := c.Health(context.Background()); err == nil {
		t.Fatal("client trusted a controller from another CA")
	}
}

func TestHealthOfAsksOneController(t *testing.T) {
	p := newTestPKI(t)
	var hits atomic.Int32
	up := p.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		writeJSON(w, 200, apiv1.Health{Role: apiv1.StateFollower, ID: "controller-1", Peers: []apiv1.Member{}})
	}))
	c := p.client(t, addrOf(up))
	down := closedAddr(t)
	if _, err := c.HealthOf(context.Background(), "https://"+down); err == nil {
		t.Fatal("HealthOf a closed address succeeded")
	}
	if hits.Load() != 0 {
		t.Fatal("HealthOf failed over to another controller")
	}
	h, err := c.HealthOf(context.Background(), addrOf(up))
	if err != nil || h.Role != apiv1.StateFollower {
		t.Fatalf("HealthOf = %+v, %v", h, err)
	}
}

// An object write whose 2xx answer breaks off was applied, but its caller
// cannot read the index: it is sent again with the same request id, and the
// controller answers the first attempt's index.
func TestBrokenAnswerResendsOnceWrites(t *testing.T) {
	p := newTestPKI(t)
	var mu sync.Mutex
	var ids []string
	srv := p.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ids = append(ids, r.Header.Get(apiv1.HeaderRequestID))
		n := len(ids)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(200)
			_, _ = w.Write([]byte(`{"index":`))
			rc := http.NewResponseController(w)
			_ = rc.Flush()
			if conn, _, err := rc.Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		}
		writeJSON(w, 200, apiv1.WriteResponse{Index: 7})
	}))
	c := p.client(t, addrOf(srv))
	idx, err := c.Put(context.Background(), "Item", "a", []byte(`{}`), new(uint64))
	if err != nil || idx != 7 {
		t.Fatalf("Put = %d, %v; want 7 after one resend", idx, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 2 || ids[0] == "" || ids[0] != ids[1] {
		t.Fatalf("request ids sent: %q, want the same id twice", ids)
	}
}
