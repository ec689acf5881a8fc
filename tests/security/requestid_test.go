package security

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/tests/apiserve"
)

// callWithID is call with apiv1.HeaderRequestID set to id.
func (e *env) callWithID(c *http.Client, a *apiserve.API, method, path, body, id string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, "https://"+a.Addr+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set(apiv1.HeaderRequestID, id)
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// A write repeated with its request id gets the first answer (through the
// leader or a follower) and is not applied again; the same id from another
// caller is another request, the same id for another object is refused,
// and a repeated refusal is the same refusal.
func TestRequestIDReplaysTheFirstAnswer(t *testing.T) {
	e := newEnv(t, 3)
	alice, bob := e.client(apiv1.RoleClusterAdmin, "alice"), e.client(apiv1.RoleClusterAdmin, "bob")
	path := apiv1.ObjectPath("OnceItem", "a") + "?cas=0"
	const id = "0123456789abcdef0123456789abcdef"

	first := e.callWithID(alice, e.leader(), http.MethodPut, path, `{"v":1}`, id)
	want(t, first, http.StatusOK, "")
	if first.header.Get(apiv1.HeaderRequestReplayed) != "" {
		t.Fatal("first answer marked replayed")
	}
	for _, a := range []*apiserve.API{e.leader(), e.follower()} {
		again := e.callWithID(alice, a, http.MethodPut, path, `{"v":1}`, id)
		want(t, again, http.StatusOK, "")
		if !bytes.Equal(again.body, first.body) || again.header.Get(apiv1.HeaderRequestReplayed) != "true" {
			t.Fatalf("repeat answered %s (replayed %q), first %s", again.body, again.header.Get(apiv1.HeaderRequestReplayed), first.body)
		}
	}
	o, ok := e.c.WaitLeader().Node().State().Get("OnceItem", "a")
	if !ok || o.CreateIndex != o.ModifyIndex {
		t.Fatalf("object after repeats: %+v", o)
	}

	// Bob cannot replay Alice's answer with her id: his write is applied
	// on its own and conflicts.
	want(t, e.callWithID(bob, e.leader(), http.MethodPut, path, `{"v":2}`, id), http.StatusConflict, apiv1.CodeConflict)

	// Alice reusing her id for another object is refused, not replayed.
	want(t, e.callWithID(alice, e.leader(), http.MethodPut, apiv1.ObjectPath("OnceItem", "b"), `{}`, id), http.StatusBadRequest, apiv1.CodeBadRequest)
	if _, ok := e.c.WaitLeader().Node().State().Get("OnceItem", "b"); ok {
		t.Fatal("a reused id wrote another object")
	}

	// A refused write repeated with its id gets the same refusal.
	const id2 = "fedcba9876543210fedcba9876543210"
	refused := e.callWithID(alice, e.leader(), http.MethodPut, path, `{"v":3}`, id2)
	want(t, refused, http.StatusConflict, apiv1.CodeConflict)
	again := e.callWithID(alice, e.leader(), http.MethodPut, path, `{"v":3}`, id2)
	if again.status != refused.status || !bytes.Equal(again.body, refused.body) {
		t.Fatalf("repeated refusal %d %s, first %d %s", again.status, again.body, refused.status, refused.body)
	}
}

// Request ids are bounded in length and characters; the bounds themselves
// are accepted.
func TestRequestIDIsValidated(t *testing.T) {
	e := newEnv(t, 1)
	admin := e.client(apiv1.RoleClusterAdmin, "admin")
	for i, tc := range []struct {
		id     string
		status int
	}{
		{strings.Repeat("a", apiv1.MinRequestIDLen-1), http.StatusBadRequest},
		{strings.Repeat("a", apiv1.MinRequestIDLen), http.StatusOK},
		{strings.Repeat("b", apiv1.MaxRequestIDLen), http.StatusOK},
		{strings.Repeat("c", apiv1.MaxRequestIDLen+1), http.StatusBadRequest},
		{"0123456789abcdef 0123", http.StatusBadRequest},
		{"0123456789abcdef/0123", http.StatusBadRequest},
		{"A-b_c.d-0123456789abcdef", http.StatusOK},
	} {
		r := e.callWithID(admin, e.leader(), http.MethodPut, apiv1.ObjectPath("OnceItem", "v"+strings.Repeat("x", i)), `{}`, tc.id)
		if r.status != tc.status {
			t.Errorf("id %q: status %d, want %d; body %s", tc.id, r.status, tc.status, r.body)
		}
	}
}
