package orchestrator

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/tests/harness"
)

// TestEndpointChangeReachesEveryControlPlaneAtOnce: a new VIP is one VRRP
// group's address, so an apiServerEndpoint change is not rolled one
// control plane at a time (the first step's gate would wait for kube-proxy
// on a node whose new VIP nobody holds yet): every control plane gets the
// new keepalived configuration at once and no spec rollout is recorded.
// The cluster recorded the endpoint it answered through before.
func TestEndpointChangeReachesEveryControlPlaneAtOnce(t *testing.T) {
	e, _ := readyCluster(t, 1)
	old := net.JoinHostPort(testVIP, strconv.Itoa(e.apiPort()))
	if c, _ := e.cluster("lab"); c.Status.APIEndpoint != old {
		t.Fatalf("status.apiEndpoint %q, want %s, the endpoint /readyz answered through", c.Status.APIEndpoint, old)
	}
	const newVIP = "127.0.0.101"
	e.applySpec(func(s *api.ClusterSpec) {
		s.APIServerEndpoint = net.JoinHostPort(newVIP, strconv.Itoa(e.apiPort()))
		s.HighAvailability.VIPAddress = newVIP
	})
	if err := harness.Poll(waitFor, func() error {
		for _, id := range []string{"node-11", "node-12", "node-13"} {
			ns, ok := e.states("lab")[id]
			if !ok {
				return fmt.Errorf("no state for %s", id)
			}
			i := -1
			for j, f := range ns.Files {
				if f.Path == render.KeepalivedConfigPath {
					i = j
				}
			}
			if i < 0 || !strings.Contains(ns.Files[i].Content, newVIP) {
				return fmt.Errorf("%s's keepalived does not hold %s yet", id, newVIP)
			}
		}
		return nil
	}); err != nil {
		c, _ := e.cluster("lab")
		t.Fatalf("%v; spec rollout %+v", err, c.Status.SpecRollout)
	}
	if c, _ := e.cluster("lab"); c.Status.SpecRollout != nil {
		t.Errorf("an endpoint move recorded a spec rollout %+v", c.Status.SpecRollout)
	}
}
