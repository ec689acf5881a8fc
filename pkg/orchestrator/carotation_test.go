package orchestrator

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/tests/harness"
)

// followSecrets makes the fake API server and etcd members serve and trust
// the cluster's stored secrets as they are at each handshake: components
// that restarted on the latest render.
func (e *env) followSecrets(cluster string) {
	o := &Orchestrator{cfg: Config{Node: e.leader(), Keyring: e.keyring}}
	var mu sync.Mutex
	var last *pki.ClusterSecrets
	e.health.follow(func() *pki.ClusterSecrets {
		mu.Lock()
		defer mu.Unlock()
		if s, _, err := o.loadSecrets(cluster); err == nil && s != nil {
			last = s
		}
		return last
	})
}

// TestCARotationRollsEachPhase raises spec.caGeneration on a ready
// three-control-plane cluster (real raft replica, sealed PKI, simulated
// agents) and follows the status: the rotation goes through its trust and
// reissue phases, each rolled out one control plane at a time like a spec
// change, and ends with every node trusting only the new CAs and holding
// certificates they issued.
func TestCARotationRollsEachPhase(t *testing.T) {
	e, _ := readyCluster(t, 1)
	e.followSecrets("lab")
	before := e.secretsOf("lab")
	e.applySpec(func(s *api.ClusterSpec) { s.CAGeneration = 1 })

	var keys, rollouts []string
	var c *api.KubernetesCluster
	if err := harness.Poll(2*waitFor, func() error {
		c, _ = e.cluster("lab")
		k := c.CAStateStored().Key()
		if len(keys) == 0 || keys[len(keys)-1] != k {
			keys = append(keys, k)
		}
		if ro := c.Status.SpecRollout; ro != nil && !slices.Contains(rollouts, ro.CA) {
			rollouts = append(rollouts, ro.CA)
		}
		if k != "1" || c.Status.Phase != api.PhaseReady || c.SpecRolling() {
			return fmt.Errorf("ca state %q, phase %s, rollout %+v", k, c.Status.Phase, c.Status.SpecRollout)
		}
		return nil
	}); err != nil {
		t.Fatalf("%v (states seen %q)", err, keys)
	}
	t.Logf("ca states seen %q, rollouts %q", keys, rollouts)
	if want := []string{"0>1 trust", "0>1 reissue", "1"}; !slices.Equal(keys[len(keys)-3:], want) {
		t.Errorf("ca states seen %q, want them to end %q", keys, want)
	}
	if want := []string{"0>1 trust", "0>1 reissue", "1"}; !slices.Equal(rollouts, want) {
		t.Errorf("spec rollouts planned for %q, want one per phase %q", rollouts, want)
	}
	if ro := c.Status.SpecRollout; ro == nil || len(ro.Steps) < 3 || ro.Steps[0].Scope != "control-plane" {
		t.Errorf("last phase's rollout %+v, want a step per control plane", ro)
	}

	after := e.secretsOf("lab")
	if string(after.CA.CertPEM) == string(before.CA.CertPEM) || after.Rotation != nil || after.CAGeneration != 1 {
		t.Fatalf("after the rotation: generation %d, rotation %+v, CA changed %v", after.CAGeneration, after.Rotation, string(after.CA.CertPEM) != string(before.CA.CertPEM))
	}
	l := render.ClusterLayout(c)
	for id, ns := range e.states("lab") {
		files := map[string]string{}
		for _, f := range ns.Files {
			files[f.Path] = f.Content
		}
		if got := files[l.PKI("ca.crt")]; got != string(after.CA.CertPEM) {
			t.Errorf("%s: ca.crt is not the new CA alone (%d certificates)", id, strings.Count(got, "BEGIN CERTIFICATE"))
		}
		crt := files[l.PKI("kubelet.crt")]
		cert, err := pki.ParseCert([]byte(crt))
		if err != nil {
			t.Fatalf("%s: kubelet.crt: %v", id, err)
		}
		ca, err := pki.ParseCert(after.CA.CertPEM)
		if err != nil {
			t.Fatal(err)
		}
		if cert.CheckSignatureFrom(ca) != nil {
			t.Errorf("%s: kubelet.crt not issued by the new CA", id)
		}
	}
}
