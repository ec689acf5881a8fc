package api

import "testing"

func TestUpdateValidate(t *testing.T) {
	const sha = "3f9c2a7e4b1d8c6f0a5e2d9b7c4a1f8e6d3b0c95"
	tests := []struct {
		name      string
		mutate    func(*UpdateSpec)
		want      []string
		fragments []string
	}{
		{"valid", func(*UpdateSpec) {}, nil, nil},
		{"valid with every pin", func(s *UpdateSpec) {
			s.FlakeRev, s.NixpkgsRev = sha, sha
			s.TestedOSPins = OSPins{NixpkgsRev: sha, CephRev: sha, CephSHA256: "0c6f2e4a9b8d1f3e5a7c9b2d4f6e8a0c1b3d5f7e9a2c4b6d8f0e1a3c5b7d9f2e", KubernetesVersion: "1.37.0"}
			s.SchemaVersion, s.PreviousSchemaVersion, s.MinCompatibleReader = 59, 56, 56
		}, nil, nil},
		{"version required", func(s *UpdateSpec) { s.Version = "" }, []string{"error spec.version"}, []string{"required"}},
		{"version shape", func(s *UpdateSpec) { s.Version = "five" }, []string{"error spec.version"}, []string{"not a version"}},
		{"strategy", func(s *UpdateSpec) { s.Strategy = "all-at-once" }, []string{"error spec.strategy"}, []string{`"one-at-a-time", "batched"`}},
		{"activation", func(s *UpdateSpec) { s.Activation = "kexec" }, []string{"error spec.activation"}, []string{`"auto", "reboot"`}},
		{"approval", func(s *UpdateSpec) { s.Approval = "later" }, []string{"error spec.approval"}, []string{`"manual", "auto"`}},
		{"update kind", func(s *UpdateSpec) { s.UpdateKind = "firmware" }, []string{"error spec.updateKind"}, []string{`"kcore", "os", "kubernetes"`}},
		{"batch and max unavailable at least 1", func(s *UpdateSpec) {
			s.Strategy, s.BatchSize, s.MaxUnavailable = "batched", -1, -2
		}, []string{"error spec.batchSize", "error spec.maxUnavailable"}, []string{"at least 1", "at least 1"}},
		{"batch size with one-at-a-time", func(s *UpdateSpec) { s.BatchSize = 3 }, []string{"error spec.batchSize"}, []string{"strategy batched"}},
		{"nodes required without allNodes", func(s *UpdateSpec) { s.AllNodes = false }, []string{"error spec.nodes"}, []string{"required when allNodes is false"}},
		{"nodes with allNodes", func(s *UpdateSpec) { s.Nodes = []string{"node-1"} }, []string{"error spec.nodes"}, []string{"must be empty"}},
		{"node selector", func(s *UpdateSpec) {
			s.AllNodes = false
			s.Nodes = []string{"node-1", "Node_2", "node-1"}
		}, []string{"error spec.nodes[1]", "error spec.nodes[2]"}, []string{"DNS label", "duplicate"}},
		{"schema order", func(s *UpdateSpec) {
			s.SchemaVersion, s.PreviousSchemaVersion, s.MinCompatibleReader = 56, 59, 60
		}, []string{"error spec.previousSchemaVersion", "error spec.minCompatibleReader", "error spec.minCompatibleReader"},
			[]string{"newer than schemaVersion", "newer than previousSchemaVersion", "newer than schemaVersion"}},
		{"negative schema", func(s *UpdateSpec) { s.SchemaVersion = -1 }, []string{"error spec.schemaVersion"}, []string{"negative"}},
		{"revs are full SHAs", func(s *UpdateSpec) {
			s.FlakeRev, s.NixpkgsRev = "3f9c2a7", "<nixpkgs-rev>"
			s.TestedOSPins = OSPins{NixpkgsRev: "A71323F68D4377D12C04A5410E214495EC598D4C", CephRev: "v19", CephSHA256: "abc", KubernetesVersion: "latest"}
		}, []string{"error spec.flakeRev", "error spec.nixpkgsRev", "error spec.testedOsPins.nixpkgsRev", "error spec.testedOsPins.cephRev",
			"error spec.testedOsPins.cephSha256", "error spec.testedOsPins.kubernetesVersion"},
			[]string{"40 lowercase hex", "40 lowercase hex", "40 lowercase hex", "40 lowercase hex", "SHA-256", "Kubernetes version"}},
		{"SRI hash accepted", func(s *UpdateSpec) {
			s.TestedOSPins.CephSHA256 = "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
		}, nil, nil},
		{"name", func(*UpdateSpec) {}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &ClusterUpdate{Metadata: ObjectMeta{Name: "release-0-5-0"}, Spec: UpdateSpec{Version: "0.5.0", AllNodes: true}}
			tt.mutate(&u.Spec)
			u.Default()
			checkIssues(t, u.Validate(), tt.want, tt.fragments)
		})
	}
	u := &ClusterUpdate{Spec: UpdateSpec{Version: "0.5.0", AllNodes: true}}
	u.Default()
	checkIssues(t, u.Validate(), []string{"error metadata.name"}, []string{"required"})
}

func TestIssues(t *testing.T) {
	is := Issues{
		{Severity: SeverityWarning, Path: "spec.a", Message: "w"},
		{Severity: SeverityError, Path: "", Message: "e"},
	}
	if !is.HasErrors() || len(is.Errors()) != 1 || len(is.Warnings()) != 1 || is.Warnings().HasErrors() {
		t.Errorf("filters disagree on %v", is)
	}
	if got := is.Error(); got != "warning: spec.a: w\nerror: e" {
		t.Errorf("Error() = %q", got)
	}
}
