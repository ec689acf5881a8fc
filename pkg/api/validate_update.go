package api

import "regexp"

var (
	gitSHA     = regexp.MustCompile(`^[0-9a-f]{40}$`)
	sha256Hex  = regexp.MustCompile(`^([0-9a-f]{64}|sha256-[A-Za-z0-9+/]{43}=)$`)
	k8sVersion = regexp.MustCompile(`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)
	semverish  = regexp.MustCompile(`^v?[0-9]+(\.[0-9]+){0,2}([-+][0-9A-Za-z.-]+)?$`)
)

// Validate checks a defaulted ClusterUpdate and returns every error with its
// field path. Call Default first.
func (u *ClusterUpdate) Validate() Issues {
	v := &collector{}
	checkName(v, "metadata.name", u.Metadata.Name)
	s := u.Spec
	if s.Version == "" {
		v.errorf("spec.version", "required, e.g. 0.5.0")
	} else if !semverish.MatchString(s.Version) {
		v.errorf("spec.version", "%q is not a version such as 0.5.0", s.Version)
	}
	oneOf(v, "spec.strategy", s.Strategy, StrategyOneAtATime, StrategyBatched)
	oneOf(v, "spec.activation", s.Activation, ActivationAuto, ActivationReboot)
	oneOf(v, "spec.approval", s.Approval, ApprovalManual, ApprovalAuto)
	oneOf(v, "spec.updateKind", s.UpdateKind, UpdateKindKcore, UpdateKindOS, UpdateKindK8s)
	if s.BatchSize < 1 {
		v.errorf("spec.batchSize", "must be at least 1, got %d", s.BatchSize)
	}
	if s.MaxUnavailable < 1 {
		v.errorf("spec.maxUnavailable", "must be at least 1, got %d", s.MaxUnavailable)
	}
	if s.Strategy == StrategyOneAtATime && s.BatchSize > 1 {
		v.errorf("spec.batchSize", "must be 1 with strategy one-at-a-time (use strategy batched)")
	}
	if s.AllNodes && len(s.Nodes) > 0 {
		v.errorf("spec.nodes", "must be empty when allNodes is true")
	}
	if !s.AllNodes && len(s.Nodes) == 0 {
		v.errorf("spec.nodes", "required when allNodes is false: list the node ids to update")
	}
	seen := map[string]bool{}
	for i, n := range s.Nodes {
		p := index("spec.nodes", i)
		if checkNodeID(v, p, n) && seen[n] {
			v.errorf(p, "duplicate node id %q", n)
		}
		seen[n] = true
	}
	validateSchemaGates(v, s)
	checkRev(v, "spec.flakeRev", s.FlakeRev)
	checkRev(v, "spec.nixpkgsRev", s.NixpkgsRev)
	checkRev(v, "spec.testedOsPins.nixpkgsRev", s.TestedOSPins.NixpkgsRev)
	checkRev(v, "spec.testedOsPins.cephRev", s.TestedOSPins.CephRev)
	if h := s.TestedOSPins.CephSHA256; h != "" && !sha256Hex.MatchString(h) {
		v.errorf("spec.testedOsPins.cephSha256", "%q is not a SHA-256 (64 hex characters or sha256-<base64>)", h)
	}
	if k := s.TestedOSPins.KubernetesVersion; k != "" && !k8sVersion.MatchString(k) {
		v.errorf("spec.testedOsPins.kubernetesVersion", "%q is not a Kubernetes version such as 1.37.0", k)
	}
	return v.issues
}

func validateSchemaGates(v *collector, s UpdateSpec) {
	for _, f := range []struct {
		path string
		n    int
	}{{"spec.schemaVersion", s.SchemaVersion}, {"spec.previousSchemaVersion", s.PreviousSchemaVersion}, {"spec.minCompatibleReader", s.MinCompatibleReader}} {
		if f.n < 0 {
			v.errorf(f.path, "must not be negative, got %d", f.n)
		}
	}
	if s.PreviousSchemaVersion > 0 && s.SchemaVersion > 0 && s.PreviousSchemaVersion > s.SchemaVersion {
		v.errorf("spec.previousSchemaVersion", "%d is newer than schemaVersion %d", s.PreviousSchemaVersion, s.SchemaVersion)
	}
	if s.MinCompatibleReader > 0 && s.PreviousSchemaVersion > 0 && s.MinCompatibleReader > s.PreviousSchemaVersion {
		v.errorf("spec.minCompatibleReader", "%d is newer than previousSchemaVersion %d: replicas still on the previous schema could not read the log", s.MinCompatibleReader, s.PreviousSchemaVersion)
	}
	if s.MinCompatibleReader > 0 && s.SchemaVersion > 0 && s.MinCompatibleReader > s.SchemaVersion {
		v.errorf("spec.minCompatibleReader", "%d is newer than schemaVersion %d", s.MinCompatibleReader, s.SchemaVersion)
	}
}

func checkRev(v *collector, path, rev string) {
	if rev != "" && !gitSHA.MatchString(rev) {
		v.errorf(path, "%q is not a full git SHA (40 lowercase hex characters)", rev)
	}
}

func oneOf(v *collector, path, got string, allowed ...string) {
	for _, a := range allowed {
		if got == a {
			return
		}
	}
	v.errorf(path, "%q is not one of %s", got, joinQuoted(allowed))
}
