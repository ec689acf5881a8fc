package orchestrator

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

// TestExpiredWhileOffReissuedOnStart stores a cluster whose PKI was issued
// ten days ago with the shortest leaves, as a controller that was off finds
// it, and starts the orchestrator (real raft replicas): its first pass
// reissues every leaf under the same CAs, publishes them, and lists them in
// the status with the Certificates condition True; no manual step.
func TestExpiredWhileOffReissuedOnStart(t *testing.T) {
	e := newEnv(t, 1)
	e.cfg.Lifetime = pki.Lifetime{Leaf: pki.MinLeafValidity}
	c := labCluster(t, "lab", e.apiPort())
	issuedAt := time.Now().Add(-10 * 24 * time.Hour)
	old := &pki.ClusterSecrets{}
	if _, err := old.EnsureFor(c, issuedAt, e.cfg.Lifetime); err != nil {
		t.Fatal(err)
	}
	pt, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := e.keyring.Seal(store.KindSecret, secretName(c.Metadata.Name), pt)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(sealed)
	if err != nil {
		t.Fatal(err)
	}
	e.apply(store.Op{Put: &store.Put{Kind: store.KindSecret, Name: secretName(c.Metadata.Name), Data: data}})
	e.registerNodes(c)
	e.putCluster(c, "")
	e.runOrchestrator()
	e.waitStates(c)

	var s *pki.ClusterSecrets
	if err := harness.Poll(waitFor, func() error {
		s = e.secretsOf(c.Metadata.Name)
		cert, err := pki.ParseCert(s.ControlPlanes["node-11"].EtcdPeer.CertPEM)
		if err != nil {
			return err
		}
		if now := time.Now(); !now.Before(cert.NotAfter) {
			return fmt.Errorf("etcd peer certificate still expired (not after %s)", cert.NotAfter)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if string(s.CA.CertPEM) != string(old.CA.CertPEM) || string(s.EtcdCA.CertPEM) != string(old.EtcdCA.CertPEM) {
		t.Fatal("a CA was replaced: the reissue must keep the trust the nodes have")
	}
	inv, err := s.Inventory(c)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, ci := range inv {
		if !now.Before(ci.NotAfter) {
			t.Errorf("%s still expired at %s", ci.Name, ci.NotAfter)
		}
	}
	if err := harness.Poll(waitFor, func() error {
		got, _ := e.cluster(c.Metadata.Name)
		if len(got.Status.Certificates) != len(inv) {
			return fmt.Errorf("status lists %d certificates, want %d", len(got.Status.Certificates), len(inv))
		}
		if cond := findCondition(got.Status.Conditions, CondCertificates); cond == nil || cond.Status != StatusTrue {
			return fmt.Errorf("condition %s = %+v, want True", CondCertificates, cond)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestCertificatesConditionWarns checks the warning windows: 30 days for a
// year-long leaf, a quarter of the lifetime for a short one, and the
// condition names what expires.
func TestCertificatesConditionWarns(t *testing.T) {
	c := labCluster(t, "lab", 6443)
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		lt   pki.Lifetime
		at   time.Duration
		want string
	}{
		{"year, fresh", pki.Lifetime{}, 0, StatusTrue},
		{"year, 31 days left", pki.Lifetime{}, pki.DefaultLeafValidity - 31*24*time.Hour, StatusTrue},
		{"year, 30 days left", pki.Lifetime{}, pki.DefaultLeafValidity - CertWarnWithin, StatusFalse},
		{"8m, before a quarter", pki.Lifetime{Leaf: 8 * time.Minute}, 5 * time.Minute, StatusTrue},
		{"8m, within a quarter", pki.Lifetime{Leaf: 8 * time.Minute}, 7 * time.Minute, StatusFalse},
		{"8m, expired", pki.Lifetime{Leaf: 8 * time.Minute}, time.Hour, StatusFalse},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &pki.ClusterSecrets{}
			if _, err := s.EnsureFor(c, t0, tt.lt); err != nil {
				t.Fatal(err)
			}
			list, cond, err := certificates(c, s, t0.Add(tt.at))
			if err != nil {
				t.Fatal(err)
			}
			if len(list) == 0 || cond.Status != tt.want {
				t.Fatalf("%d certificates, condition %+v; want status %s", len(list), cond, tt.want)
			}
		})
	}
}
