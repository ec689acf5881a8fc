package pki

import (
	"crypto/x509"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// phaseSnapshot is what one phase of a CA rotation hands the nodes: every
// leaf by slot with the CA kind that must sign it, and the trust bundles.
type phaseSnapshot struct {
	name   string
	leaves map[string]leafOf
	trust  map[caKind][]byte
}

type leafOf struct {
	kind caKind
	cert *x509.Certificate
}

func snapshotPhase(t *testing.T, name string, c *api.KubernetesCluster, s *ClusterSecrets) phaseSnapshot {
	t.Helper()
	reqs, err := leafRequests(c)
	if err != nil {
		t.Fatal(err)
	}
	p := phaseSnapshot{name: name, leaves: map[string]leafOf{}, trust: map[caKind][]byte{
		caCluster: s.ClusterTrust(), caEtcd: s.EtcdTrust(), caFrontProxy: s.FrontProxyTrust(),
	}}
	for _, r := range reqs {
		if r.remove || !r.present(s) {
			continue
		}
		cert, err := ParseCert(r.slot(s).CertPEM)
		if err != nil {
			t.Fatalf("%s: %s: %v", name, r.name, err)
		}
		p.leaves[r.name] = leafOf{kind: r.ca, cert: cert}
	}
	return p
}

// verifies reports whether cert chains to a CA of the PEM bundle.
func verifies(cert *x509.Certificate, bundle []byte) bool {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundle) {
		return false
	}
	_, err := cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: testNow(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return err == nil
}

// TestCARotationKeepsNeighbouringPhasesTrusted walks a rotation through its
// phases as the orchestrator does (EnsureFor, then AdvanceCARotation and
// EnsureFor once a phase settled) and checks what makes a rolling restart
// safe: during the roll of a phase some nodes run the phase before and some
// the phase after, so every leaf of either must chain to every trust bundle
// of either. At the end only the new CAs are trusted and the old leaves no
// longer verify.
func TestCARotationKeepsNeighbouringPhasesTrusted(t *testing.T) {
	c := labCluster()
	s, err := IssueClusterSecrets(c, testNow())
	if err != nil {
		t.Fatal(err)
	}
	if s.CAGeneration != 0 || s.Rotation != nil {
		t.Fatalf("new secrets: generation %d, rotation %+v", s.CAGeneration, s.Rotation)
	}
	if err := s.AdvanceCARotation(); !errors.Is(err, ErrNoRotation) {
		t.Fatalf("advance without a rotation: %v, want ErrNoRotation", err)
	}
	phases := []phaseSnapshot{snapshotPhase(t, "before", c, s)}

	c.Spec.CAGeneration = 1
	changed, err := s.EnsureFor(c, testNow(), Lifetime{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(changed, []string{"caRotation"}) {
		t.Fatalf("starting a rotation changed %q, want only caRotation (no leaf is reissued in the trust phase)", changed)
	}
	if st := s.CAState(); st.Key() != "0>1 trust" {
		t.Fatalf("state %q, want 0>1 trust", st.Key())
	}
	phases = append(phases, snapshotPhase(t, "trust", c, s))
	for _, want := range []string{"0>1 reissue", "1"} {
		if err := s.AdvanceCARotation(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EnsureFor(c, testNow(), Lifetime{}); err != nil {
			t.Fatal(err)
		}
		if got := s.CAState().Key(); got != want {
			t.Fatalf("state %q, want %q", got, want)
		}
		phases = append(phases, snapshotPhase(t, want, c, s))
	}
	if s.Rotation != nil {
		t.Fatalf("rotation left after its end: %+v", s.Rotation.CARotation)
	}

	for i := 0; i+1 < len(phases); i++ {
		for _, a := range phases[i : i+2] {
			for _, b := range phases[i : i+2] {
				for name, l := range a.leaves {
					if !verifies(l.cert, b.trust[l.kind]) {
						t.Errorf("%s of phase %s does not verify against the trust of phase %s", name, a.name, b.name)
					}
				}
			}
		}
	}
	first, last := phases[0], phases[len(phases)-1]
	for name, l := range first.leaves {
		if verifies(l.cert, last.trust[l.kind]) {
			t.Errorf("%s of the old generation still verifies once the rotation ended", name)
		}
	}
	for k, b := range last.trust {
		if n := strings.Count(string(b), "BEGIN CERTIFICATE"); n != 1 {
			t.Errorf("CA kind %d: %d certificates trusted after the rotation, want 1", k, n)
		}
	}
}

// TestCARotationDropsOldKeys checks that the old CAs' keys are gone once
// the new ones issue: in the reissue phase only their certificates stay.
func TestCARotationDropsOldKeys(t *testing.T) {
	c := labCluster()
	s, err := IssueClusterSecrets(c, testNow())
	if err != nil {
		t.Fatal(err)
	}
	oldKey := string(s.CA.KeyPEM)
	c.Spec.CAGeneration = 3
	if _, err := s.EnsureFor(c, testNow(), Lifetime{}); err != nil {
		t.Fatal(err)
	}
	if s.Rotation.From != 0 || s.Rotation.To != 3 || len(s.Rotation.CA.KeyPEM) == 0 {
		t.Fatalf("trust phase: %+v, want 0>3 holding the new CA's key", s.Rotation.CARotation)
	}
	if err := s.AdvanceCARotation(); err != nil {
		t.Fatal(err)
	}
	r := s.Rotation
	for name, kp := range map[string]KeyPair{"ca": r.CA, "etcdCa": r.EtcdCA, "frontProxyCa": r.FrontProxyCA} {
		if len(kp.KeyPEM) != 0 || len(kp.CertPEM) == 0 {
			t.Errorf("reissue phase keeps old %s with key %v, cert %v; want the certificate only", name, len(kp.KeyPEM) > 0, len(kp.CertPEM) > 0)
		}
	}
	if string(s.CA.KeyPEM) == oldKey || s.CAGeneration != 3 {
		t.Errorf("reissue phase: the new CA does not issue (generation %d)", s.CAGeneration)
	}
	inv, err := s.Inventory(c)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(inv, func(ci CertInfo) bool { return ci.Name == "caRotation/ca" }) {
		t.Errorf("inventory lacks the old CA still trusted: %+v", inv[:3])
	}
}

// TestDueCARotatesInsteadOfBeingReplaced: a CA within RenewBefore of its
// expiry starts a rotation to the next generation and keeps issuing until
// the reissue phase; nothing trusted is replaced outright. A CA that
// already expired has nothing left to keep trusted and is replaced.
func TestDueCARotatesInsteadOfBeingReplaced(t *testing.T) {
	c := labCluster()
	issued := testNow().Add(-ClusterCAValidity + RenewBefore/2)
	s, err := IssueClusterSecrets(c, issued)
	if err != nil {
		t.Fatal(err)
	}
	oldCA := string(s.CA.CertPEM)
	changed, err := s.EnsureFor(c, testNow(), Lifetime{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(changed, "caRotation") || slices.Contains(changed, "ca") {
		t.Fatalf("a due CA changed %q, want a rotation started and the CA kept", changed)
	}
	if string(s.CA.CertPEM) != oldCA || s.CAState().Key() != "0>1 trust" {
		t.Fatalf("state %q, CA kept %v; want 0>1 trust with the old CA still issuing", s.CAState().Key(), string(s.CA.CertPEM) == oldCA)
	}
	if again, err := s.EnsureFor(c, testNow(), Lifetime{}); err != nil || len(again) != 0 {
		t.Fatalf("second EnsureFor during the rotation = %q, %v; want nothing", again, err)
	}

	expired, err := IssueClusterSecrets(c, testNow().Add(-ClusterCAValidity-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	changed, err = expired.EnsureFor(c, testNow(), Lifetime{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(changed, "ca") || expired.Rotation != nil {
		t.Errorf("an expired CA changed %q with rotation %+v; want it replaced, no rotation", changed, expired.Rotation)
	}
}
