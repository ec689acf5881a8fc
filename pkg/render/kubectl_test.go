package render

import (
	"slices"
	"strings"
	"testing"
)

// The kubectl tasks talk to the local API server with admin.conf's
// credentials and wait for its health, while admin.conf itself keeps
// naming the endpoint (the VIP).
func TestKubectlTasksUseTheLocalAPIServer(t *testing.T) {
	tests := []struct {
		cluster, node, task string
		server              string
		after               []string
	}{
		{cluster: "lab", node: "node-105", task: TaskAddons, server: "https://127.0.0.1:6443", after: []string{UnitAPIServer}},
		{cluster: "lab", node: "node-105", task: TaskCiliumL2, server: "https://127.0.0.1:6443", after: []string{UnitCilium, UnitAPIServer}},
		{cluster: "lab", node: "node-105", task: TaskProvisioner, server: "https://127.0.0.1:6443", after: []string{UnitAPIServer}},
		{cluster: "bridge", node: "node-105", task: TaskAddons, server: "https://127.0.0.1:6444", after: []string{UnitAPIServer}},
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
