package kubeflags

import (
	"slices"
	"strings"
	"testing"
)

func TestArgvPutsExtraFlagsLastSorted(t *testing.T) {
	got := Argv("kube-scheduler", []Flag{{"secure-port", "10259"}, {"bind-address", "127.0.0.1"}},
		map[string]string{"v": "2", "feature-gates": "A=true", "authentication-tolerate-lookup-failure": ""})
	want := []string{"kube-scheduler", "--secure-port=10259", "--bind-address=127.0.0.1",
		"--authentication-tolerate-lookup-failure=", "--feature-gates=A=true", "--v=2"}
	if !slices.Equal(got, want) {
		t.Errorf("argv %q, want %q", got, want)
	}
}

func TestOwnedCoversEveryComponent(t *testing.T) {
	for _, comp := range Components() {
		owned := Owned(comp)
		if len(owned) == 0 || !slices.IsSorted(owned) || Binary(comp) == "" {
			t.Errorf("%s: owned %v binary %q", comp, owned, Binary(comp))
		}
	}
	for _, tc := range []struct {
		comp, flag string
		owned      bool
	}{
		{APIServer, "etcd-servers", true}, {APIServer, "shutdown-send-retry-after", true}, {APIServer, "audit-log-path", false},
		{Kubelet, "register-with-taints", true}, {Kubelet, "anonymous-auth", true}, {Kubelet, "node-labels", false},
		{Scheduler, "kubeconfig", true}, {ControllerManager, "cluster-cidr", true}, {"etcd", "name", false},
	} {
		if got := IsOwned(tc.comp, tc.flag); got != tc.owned {
			t.Errorf("IsOwned(%s, %s) = %v, want %v", tc.comp, tc.flag, got, tc.owned)
		}
	}
}

func TestWriteYAMLNestsSharedParents(t *testing.T) {
	var w strings.Builder
	WriteYAML(&w, []ConfigField{
		{Path: "a.b.c", Value: "1"}, {Path: "a.b.d", Value: "2"}, {Path: "a.e", Value: "3"},
		{Path: "f", List: []string{"x", "y"}}, {Path: "g", Value: "[]"},
	})
	want := "a:\n  b:\n    c: 1\n    d: 2\n  e: 3\nf:\n  - x\n  - y\ng: []\n"
	if w.String() != want {
		t.Errorf("got\n%s\nwant\n%s", w.String(), want)
	}
}
