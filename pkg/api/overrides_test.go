package api

import (
	"strings"
	"testing"
)

func TestOverridesWarnsBeforeDefaultReplaces(t *testing.T) {
	tests := []struct {
		endpoint, cni string
		warn          bool
	}{
		{"10.0.0.10:7443", CNICilium, true},
		{"10.0.0.10:7443", "", false},
		{"10.0.0.10:7443", CNIBridge, false},
		{"10.0.0.10:6443", CNICilium, false},
	}
	for _, tt := range tests {
		c := &KubernetesCluster{Spec: ClusterSpec{APIServerEndpoint: tt.endpoint, CNI: tt.cni}}
		is := c.Overrides()
		if got := len(is) == 1 && is[0].Path == "spec.cni" && is[0].Severity == SeverityWarning; got != tt.warn {
			t.Errorf("%s cni %q: overrides %v, want warning %v", tt.endpoint, tt.cni, is, tt.warn)
		}
		c.Default()
		if tt.warn && (c.Spec.CNI != CNIBridge || !strings.Contains(is[0].Message, "7443")) {
			t.Errorf("%s: warned %v but Default kept %q", tt.endpoint, is, c.Spec.CNI)
		}
	}
}
