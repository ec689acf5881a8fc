package pki

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestLifetimeBounds(t *testing.T) {
	tests := []struct {
		leaf time.Duration
		ok   bool
	}{
		{0, true},
		{MinLeafValidity, true},
		{MinLeafValidity - time.Second, false},
		{MaxLeafValidity, true},
		{MaxLeafValidity + time.Second, false},
		{-time.Minute, false},
	}
	for _, tt := range tests {
		err := Lifetime{Leaf: tt.leaf}.Validate()
		if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrBadLifetime)) {
			t.Errorf("Validate(%s) = %v, want ok %v", tt.leaf, err, tt.ok)
		}
	}
	c := labCluster()
	if _, err := (&ClusterSecrets{}).EnsureFor(c, testNow(), Lifetime{Leaf: MinLeafValidity - time.Second}); !errors.Is(err, ErrBadLifetime) {
		t.Fatalf("EnsureFor below the bound = %v, want ErrBadLifetime", err)
	}
}

// TestEnsureRenewsAtTwoThirds checks every leaf is reissued once two thirds
// of its lifetime have passed, and not a moment earlier.
func TestEnsureRenewsAtTwoThirds(t *testing.T) {
	for _, lt := range []Lifetime{{}, {Leaf: MinLeafValidity}, {Leaf: 24 * time.Hour}} {
		t.Run(lt.LeafValidity().String(), func(t *testing.T) {
			c := labCluster()
			s := &ClusterSecrets{}
			if _, err := s.EnsureFor(c, testNow(), lt); err != nil {
				t.Fatal(err)
			}
			cert, err := ParseCert(s.Nodes["node-103"].KubeletClient.CertPEM)
			if err != nil {
				t.Fatal(err)
			}
			if got := cert.NotAfter.Sub(testNow()); got != lt.LeafValidity() {
				t.Fatalf("leaf valid for %s, want %s", got, lt.LeafValidity())
			}
			due := RenewAt(cert)
			if got, err := s.EnsureFor(c, due.Add(-time.Second), lt); err != nil || len(got) != 0 {
				t.Fatalf("EnsureFor a second before two thirds = %v, %v; want nothing", got, err)
			}
			got, err := s.EnsureFor(c, due, lt)
			if err != nil {
				t.Fatal(err)
			}
			if want := allLeaves(c); !slices.Equal(got, want) {
				t.Fatalf("EnsureFor at two thirds reissued %v, want every leaf %v", got, want)
			}
		})
	}
}

// TestEnsureReissuesLeavesExpiredWhileOff is a cluster whose controller was
// off for longer than the leaf lifetime: the first pass after it comes back
// reissues every leaf, valid from then, under the CAs it already had.
func TestEnsureReissuesLeavesExpiredWhileOff(t *testing.T) {
	c := labCluster()
	lt := Lifetime{Leaf: MinLeafValidity}
	s := &ClusterSecrets{}
	if _, err := s.EnsureFor(c, testNow(), lt); err != nil {
		t.Fatal(err)
	}
	ca := s.CA
	back := testNow().Add(10 * 24 * time.Hour)
	got, err := s.EnsureFor(c, back, lt)
	if err != nil {
		t.Fatal(err)
	}
	if want := allLeaves(c); !slices.Equal(got, want) {
		t.Fatalf("EnsureFor after the downtime reissued %v, want every leaf %v", got, want)
	}
	if string(s.CA.CertPEM) != string(ca.CertPEM) {
		t.Fatal("the cluster CA was replaced: nodes would stop trusting each other")
	}
	root, err := LoadCA(s.CA)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ParseCert(s.ControlPlanes["node-105"].APIServer.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	if back.Before(cert.NotBefore) || !back.Before(cert.NotAfter) || cert.CheckSignatureFrom(root.Cert()) != nil {
		t.Fatalf("reissued API server certificate %s..%s is not valid at %s under the cluster CA", cert.NotBefore, cert.NotAfter, back)
	}
}

// TestEnsureShortenedLifetimeReissues checks a shorter policy takes effect
// at once instead of after the longer leaves' two thirds.
func TestEnsureShortenedLifetimeReissues(t *testing.T) {
	c := labCluster()
	s := &ClusterSecrets{}
	if _, err := s.EnsureFor(c, testNow(), Lifetime{}); err != nil {
		t.Fatal(err)
	}
	got, err := s.EnsureFor(c, testNow().Add(time.Minute), Lifetime{Leaf: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if want := allLeaves(c); !slices.Equal(got, want) {
		t.Fatalf("EnsureFor with a shorter lifetime reissued %v, want every leaf", got)
	}
}

// TestInventoryIsWhatIsStored checks the inventory parses the stored
// certificates: a renewal shows in it, and a node without secrets yet is
// left out rather than crashing.
func TestInventoryIsWhatIsStored(t *testing.T) {
	c := labCluster()
	s := &ClusterSecrets{}
	if _, err := s.EnsureFor(c, testNow(), Lifetime{Leaf: time.Hour}); err != nil {
		t.Fatal(err)
	}
	inv, err := s.Inventory(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 + len(allLeaves(c)); len(inv) != want {
		t.Fatalf("inventory has %d certificates, want %d", len(inv), want)
	}
	for _, ci := range inv {
		if ci.Name == "controlPlanes/node-105/apiServer" && (!ci.NotAfter.Equal(testNow().Add(time.Hour)) || ci.Subject != "CN=kube-apiserver" || ci.Issuer != "CN=kubernetes") {
			t.Fatalf("api server certificate %+v", ci)
		}
	}
	delete(s.Nodes, "node-103")
	inv, err = s.Inventory(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, ci := range inv {
		if ci.Name == "nodes/node-103/kubeletClient" {
			t.Fatal("inventory lists a certificate that is not stored")
		}
	}
}
