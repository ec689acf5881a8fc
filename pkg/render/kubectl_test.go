package render

import (
	"slices"
	"strings"
	"testing"
)

// The kubectl tasks talk to the local API server with admin.conf's
// credentials and wait for its health, while admin.conf itself keeps
// naming the endpoint (the VIP). Every one but the kube-dns Service's
// (whose cluster IP change needs --force) is a server-side apply under
// kcore's field manager.
func TestKubectlTasksUseTheLocalAPIServer(t *testing.T) {
	tests := []struct {
		cluster, node, task string
		server              string
		after               []string
		serverSide          bool
	}{
		{cluster: "lab", node: "node-105", task: TaskAddons, server: "https://127.0.0.1:6443", after: []string{UnitAPIServer}, serverSide: true},
		{cluster: "lab", node: "node-105", task: TaskKubeDNS, server: "https://127.0.0.1:6443", after: []string{UnitAPIServer}},
		{cluster: "lab", node: "node-105", task: TaskCiliumL2, server: "https://127.0.0.1:6443", after: []string{UnitCilium, UnitAPIServer}, serverSide: true},
		{cluster: "lab", node: "node-105", task: TaskProvisioner, server: "https://127.0.0.1:6443", after: []string{UnitAPIServer}, serverSide: true},
		{cluster: "bridge", node: "node-105", task: TaskAddons, server: "https://127.0.0.1:6444", after: []string{UnitAPIServer}, serverSide: true},
	}
	for _, tt := range tests {
		t.Run(tt.cluster+"/"+tt.task, func(t *testing.T) {
			_, states := renderCase(t, tt.cluster, Options{})
			ns := states[tt.node]
			task := taskByName(ns, tt.task)
			if task == nil {
				t.Fatalf("%s has no task %s", tt.node, tt.task)
			}
			want := []string{"kubectl", "--kubeconfig=" + AdminKubeconfigPath, "--server=" + tt.server, "apply"}
			if !slices.Equal(task.Argv[:len(want)], want) {
				t.Errorf("argv = %q, want it to start with %q", task.Argv, want)
			}
			ssa := []string{"--server-side", "--force-conflicts", "--field-manager=" + FieldManager, "--validate=false"}
			if got := len(task.Argv) > len(want)+len(ssa) && slices.Equal(task.Argv[len(want):len(want)+len(ssa)], ssa); got != tt.serverSide {
				t.Errorf("argv = %q: server-side apply %v, want %v", task.Argv, got, tt.serverSide)
			}
			if !slices.Contains(task.Argv, "--validate=false") {
				t.Errorf("argv = %q: kubectl would fetch the API's schema first", task.Argv)
			}
			if !slices.Equal(task.After, tt.after) {
				t.Errorf("after = %q, want %q", task.After, tt.after)
			}
			apiServer := unitByName(ns, UnitAPIServer)
			if apiServer == nil || !strings.HasPrefix(apiServer.HealthURL, tt.server+"/") {
				t.Errorf("the local kube-apiserver's health URL does not match the task's server: %+v", apiServer)
			}
			admin := fileByPath(ns, AdminKubeconfigPath)
			if admin == nil || strings.Contains(admin.Content, "127.0.0.1") {
				t.Errorf("admin.conf must keep naming the endpoint, not the local API server")
			}
		})
	}
}

// Every file a kubectl task applies is among Layout.KubectlManifests, which
// the lab test checks with the API server's strict field validation, and
// every one of them is applied by some task of the test clusters.
func TestKubectlManifestsAreWhatTheTasksApply(t *testing.T) {
	applied := map[string]bool{}
	for _, name := range []string{"lab", "bridge", "lab-ha3"} {
		c, states := renderCase(t, name, Options{})
		listed := ClusterLayout(c).KubectlManifests()
		for _, ns := range states {
			for _, task := range ns.Tasks {
				if task.Argv[0] != "kubectl" {
					continue
				}
				for i, a := range task.Argv[:len(task.Argv)-1] {
					if a != "-f" {
						continue
					}
					p := task.Argv[i+1]
					if !slices.Contains(listed, p) {
						t.Errorf("%s: task %s applies %s, which KubectlManifests does not list", name, task.Name, p)
					}
					applied[p] = true
				}
			}
		}
	}
	for _, p := range PrimaryLayout().KubectlManifests() {
		if !applied[p] {
			t.Errorf("KubectlManifests lists %s, which no kubectl task of the test clusters applies", p)
		}
	}
}
