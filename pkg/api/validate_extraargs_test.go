package api

import (
	"fmt"
	"strings"
	"testing"
)

func TestExtraArgsValidate(t *testing.T) {
	long := strings.Repeat("x", MaxExtraArgValueLen)
	many := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("flag-%d", i)] = "1"
		}
		return m
	}
	tests := []struct {
		name      string
		mutate    func(*ClusterSpec)
		want      []string
		fragments []string
	}{
		{"valid on every component", func(s *ClusterSpec) {
			s.APIServer.ExtraArgs = map[string]string{"audit-log-maxage": "30", "event-ttl": "2h", "feature-gates": "A=true,B=false"}
			s.ControllerManager.ExtraArgs = map[string]string{"terminated-pod-gc-threshold": "100"}
			s.Scheduler.ExtraArgs = map[string]string{"v": "2"}
			s.Kubelet.ExtraArgs = map[string]string{"node-labels": "tier=edge", "max-open-files": ""}
		}, nil, nil},
		{"a flag kcore sets on kube-apiserver", func(s *ClusterSpec) { s.APIServer.ExtraArgs = map[string]string{"etcd-servers": "https://evil:2379"} },
			[]string{"error spec.apiServer.extraArgs.etcd-servers"}, []string{"set by kcore (kube-apiserver --etcd-servers"}},
		{"kcore's flags on every component", func(s *ClusterSpec) {
			s.APIServer.ExtraArgs = map[string]string{"tls-cert-file": "/x", "advertise-address": "1.2.3.4", "secure-port": "1", "service-cluster-ip-range": "10.0.0.0/8"}
			s.ControllerManager.ExtraArgs = map[string]string{"kubeconfig": "/x"}
			s.Scheduler.ExtraArgs = map[string]string{"bind-address": "0.0.0.0"}
			s.Kubelet.ExtraArgs = map[string]string{"register-with-taints": ""}
		}, []string{
			"error spec.apiServer.extraArgs.advertise-address", "error spec.apiServer.extraArgs.secure-port",
			"error spec.apiServer.extraArgs.service-cluster-ip-range", "error spec.apiServer.extraArgs.tls-cert-file",
			"error spec.controllerManager.extraArgs.kubeconfig", "error spec.scheduler.extraArgs.bind-address",
			"error spec.kubelet.extraArgs.register-with-taints",
		}, []string{"--advertise-address", "--secure-port", "--service-cluster-ip-range", "--tls-cert-file", "kube-controller-manager --kubeconfig", "kube-scheduler --bind-address", "kubelet --register-with-taints"}},
		{"a kubelet flag that overrides kcore's KubeletConfiguration", func(s *ClusterSpec) {
			s.Kubelet.ExtraArgs = map[string]string{"anonymous-auth": "true", "read-only-port": "10255"}
		}, []string{"error spec.kubelet.extraArgs.anonymous-auth", "error spec.kubelet.extraArgs.read-only-port"},
			[]string{"kubelet --anonymous-auth", "kubelet --read-only-port"}},
		{"leading dashes", func(s *ClusterSpec) { s.APIServer.ExtraArgs = map[string]string{"--v": "2"} },
			[]string{`error spec.apiServer.extraArgs.--v`}, []string{"without the leading --"}},
		{"= in the name", func(s *ClusterSpec) { s.APIServer.ExtraArgs = map[string]string{"v=2": ""} },
			[]string{`error spec.apiServer.extraArgs.v=2`}, []string{"not a flag name"}},
		{"upper case and spaces", func(s *ClusterSpec) { s.Kubelet.ExtraArgs = map[string]string{"Node Labels": "a"} },
			[]string{`error spec.kubelet.extraArgs.Node Labels`}, []string{"not a flag name"}},
		{"a newline in a value", func(s *ClusterSpec) { s.Kubelet.ExtraArgs = map[string]string{"node-labels": "a\n--kubeconfig=/x"} },
			[]string{`error spec.kubelet.extraArgs.node-labels`}, []string{"control character"}},
		{"value at the bound", func(s *ClusterSpec) { s.APIServer.ExtraArgs = map[string]string{"event-ttl": long} }, nil, nil},
		{"value over the bound", func(s *ClusterSpec) { s.APIServer.ExtraArgs = map[string]string{"event-ttl": long + "x"} },
			[]string{`error spec.apiServer.extraArgs.event-ttl`}, []string{fmt.Sprintf("%d bytes; at most %d", MaxExtraArgValueLen+1, MaxExtraArgValueLen)}},
		{"name at the bound", func(s *ClusterSpec) {
			s.APIServer.ExtraArgs = map[string]string{strings.Repeat("a", MaxExtraArgNameLen): "1"}
		}, nil, nil},
		{"name over the bound", func(s *ClusterSpec) {
			s.APIServer.ExtraArgs = map[string]string{strings.Repeat("a", MaxExtraArgNameLen+1): "1"}
		}, []string{"error spec.apiServer.extraArgs." + strings.Repeat("a", MaxExtraArgNameLen+1)}, []string{"at most 63"}},
		{"flags at the bound", func(s *ClusterSpec) { s.Scheduler.ExtraArgs = many(MaxExtraArgs) }, nil, nil},
		{"flags over the bound", func(s *ClusterSpec) { s.Scheduler.ExtraArgs = many(MaxExtraArgs + 1) },
			[]string{"error spec.scheduler.extraArgs"}, []string{fmt.Sprintf("%d flags; at most %d", MaxExtraArgs+1, MaxExtraArgs)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseCluster()
			tt.mutate(&c.Spec)
			c.Default()
			checkIssues(t, c.Validate(), tt.want, tt.fragments)
		})
	}
}
