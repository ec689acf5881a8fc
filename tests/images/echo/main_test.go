package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHandler serves the hostname on / and ok on /healthz over a real
// listener, and nothing on other paths.
func TestHandler(t *testing.T) {
	srv := httptest.NewServer(handler("pod-a"))
	defer srv.Close()
	for _, tt := range []struct {
		path, want string
		code       int
	}{
		{"/", "hostname: pod-a\n", http.StatusOK},
		{"/healthz", "ok\n", http.StatusOK},
		{"/nope", "", http.StatusNotFound},
	} {
		resp, err := http.Get(srv.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tt.code || !strings.HasPrefix(string(body), tt.want) {
			t.Errorf("GET %s: %d %q, want %d %q…", tt.path, resp.StatusCode, body, tt.code, tt.want)
		}
	}
}

// TestVersion prints the version and serves nothing.
func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-version"}, &out, nil); err != nil {
		t.Fatal(err)
	}
	if out.String() != version+"\n" {
		t.Errorf("got %q", out.String())
	}
}

// TestClientChecks runs the client against the server's handler on
// loopback: a GET whose body holds the substring passes, one that does not,
// a non-200 answer and a bad URL fail, and a lookup of localhost resolves.
func TestClientChecks(t *testing.T) {
	srv := httptest.NewServer(handler("echo-a"))
	defer srv.Close()
	var out bytes.Buffer
	if err := run([]string{"-get", srv.URL + "/=hostname: echo-a", "-lookup", "localhost"}, &out, nil); err != nil {
		t.Fatalf("checks failed: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "hostname: echo-a") || !strings.Contains(out.String(), "lookup localhost:") {
		t.Errorf("output %q", out.String())
	}
	for _, args := range [][]string{
		{"-get", srv.URL + "/=hostname: echo-b"},
		{"-get", srv.URL + "/missing"},
		{"-get", "ftp://x/"},
	} {
		if err := run(args, io.Discard, nil); err == nil {
			t.Errorf("%v passed", args)
		}
	}
}
