package rollout

import (
	"fmt"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

// checkInvalid turns the update's validation errors into invalid-update
// issues and adds the rules validation cannot know about.
func checkInvalid(u *api.ClusterUpdate) []plan.Issue {
	var out []plan.Issue
	for _, i := range u.Validate().Errors() {
		out = append(out, plan.Issue{Code: CodeInvalidUpdate, Path: i.Path, Message: i.Message, Fix: "correct the manifest"})
	}
	if u.Spec.UpdateKind == api.UpdateKindK8s && u.Spec.TestedOSPins.KubernetesVersion == "" {
		out = append(out, plan.Issue{Code: CodeInvalidUpdate, Path: "spec.testedOsPins.kubernetesVersion",
			Message: "update_kind kubernetes needs the Kubernetes version the release moves to",
			Fix:     "set tested_os_pins.kubernetes_version, e.g. 1.37.0"})
	}
	if u.Spec.UpdateKind == api.UpdateKindOS && u.Spec.FlakeRev == "" {
		// Without a pin the steps would change nothing on any node and
		// the rollout would report done having done nothing.
		out = append(out, plan.Issue{Code: CodeOSPinMissing, Path: "spec.flakeRev",
			Message: "update_kind os has no flake_rev: there is no OS pin to move the nodes to, so every step would change nothing",
			Fix:     "set flake_ref and flake_rev (a full 40-hex git SHA) to the OS release the nodes move to, or use update_kind = \"kubernetes\" with tested_os_pins.kubernetes_version to move only Kubernetes"})
	}
	return out
}

// checkReady blocks on target nodes that are not ready and on clusters of
// target nodes that are not in phase ready.
func checkReady(targets []*target) []plan.Issue {
	var out []plan.Issue
	seen := map[string]bool{}
	for _, t := range targets {
		if !t.node.Status.Ready {
			out = append(out, plan.Issue{Code: CodeNodeNotReady, Node: t.id, Cluster: first(clusterNames(t.clusters)),
				Message: fmt.Sprintf("node %s is not ready (last heartbeat %s); a rollout only starts when every target node is ready", t.id, orNever(t.node.Status.LastHeartbeat)),
				Fix:     "bring the node's agent back (`kctl node list` shows its heartbeat), or leave the node out of spec.nodes"})
		}
		for _, c := range t.clusters {
			name := c.Metadata.Name
			if seen[name] || c.Status.Phase == api.PhaseReady {
				continue
			}
			seen[name] = true
			msg := fmt.Sprintf("cluster %s is in phase %s, not ready; its node %s is a target", name, orUnknown(c.Status.Phase), t.id)
			if r := failing(c.Status.Conditions); r != "" {
				msg += ": " + r
			}
			out = append(out, plan.Issue{Code: CodeClusterNotReady, Cluster: name, Node: t.id, Message: msg,
				Fix: fmt.Sprintf("wait until `kctl kubernetes health %s` reports ready (finish the running change, or fix what degraded it) and plan again", name)})
		}
	}
	return out
}

// checkRuntime blocks every target member whose containerd, by its facts,
// is too old for the Kubernetes release the update moves its kubelet to
// (plan.RuntimeSupport, the table cluster plans check too).
func checkRuntime(targets []*target, to string) []plan.Issue {
	var out []plan.Issue
	for _, t := range targets {
		if t.role == RoleStandalone {
			continue
		}
		have := t.node.Facts.Versions[plan.ContainerdFact]
		if pair, bad := plan.ContainerdUnsupported(to, have); bad {
			out = append(out, plan.Issue{Code: plan.CodeContainerdUnsupported, Path: "spec.testedOsPins.kubernetesVersion", Node: t.id, Cluster: first(clusterNames(t.clusters)),
				Message: fmt.Sprintf("Kubernetes %s needs containerd %s or later on %s, which has %s: %s", to, pair.ContainerdMin, t.id, have, pair.Why),
				Fix:     fmt.Sprintf("install containerd %s or later on %s first (kcore-containerd runs the containerd its agent finds in --bin-dir, else on PATH), then plan the update again", pair.ContainerdMin, t.id)})
		}
	}
	return out
}

// failing joins the messages of the conditions that are not True.
func failing(cs []api.Condition) string {
	var out []string
	for _, c := range cs {
		if c.Status != "True" && c.Message != "" {
			out = append(out, c.Message)
		}
	}
	return strings.Join(out, "; ")
}

// checkSchema applies the controller schema gates to every replica:
// previousSchemaVersion is the schema the release upgrades from, so every
// replica must run at least it; minCompatibleReader is the oldest reader of
// what the release writes, so every replica that is not upgraded yet (all
// of them, when the rollout starts) must read at least it; and no replica
// may already run a schema newer than schemaVersion, which would be a
// downgrade of the controller.
func checkSchema(s api.UpdateSpec, replicas []ControllerReplica) []plan.Issue {
	var out []plan.Issue
	gated := s.PreviousSchemaVersion > 0 || s.MinCompatibleReader > 0 || s.SchemaVersion > 0
	for _, r := range replicas {
		if r.Schema == 0 {
			if gated {
				out = append(out, plan.Issue{Code: CodeSchemaGate, Path: "spec.minCompatibleReader",
					Message: fmt.Sprintf("controller replica %s recorded no schema (it runs a build from before replicas recorded one), so release %s's schema gates cannot be checked against it", r.ID, s.Version),
					Fix:     fmt.Sprintf("upgrade replica %s to the current release first (it records its schema when it joins or leads), or remove it from the controller (`kctl controller members`)", r.ID)})
			}
			continue
		}
		if p := s.PreviousSchemaVersion; p > 0 && r.Schema < p {
			out = append(out, plan.Issue{Code: CodeSchemaGate, Path: "spec.previousSchemaVersion",
				Message: fmt.Sprintf("controller replica %s runs schema %d; release %s upgrades from schema %d and cannot migrate %d", r.ID, r.Schema, s.Version, p, r.Schema),
				Fix:     fmt.Sprintf("first roll out a release whose schema_version is at least %d to every controller replica (`kctl controller members` shows each replica's schema)", p)})
		}
		if m := s.MinCompatibleReader; m > 0 && r.Schema < m {
			out = append(out, plan.Issue{Code: CodeSchemaGate, Path: "spec.minCompatibleReader",
				Message: fmt.Sprintf("controller replica %s reads schema %d; release %s writes schema %d entries that only readers of schema %d or newer understand, so %s could not apply the log while it waits for its turn", r.ID, r.Schema, s.Version, s.SchemaVersion, m, r.ID),
				Fix:     fmt.Sprintf("upgrade replica %s to a release with schema at least %d first, or remove it from the controller (`kctl controller members`)", r.ID, m)})
		}
		if v := s.SchemaVersion; v > 0 && r.Schema > v {
			out = append(out, plan.Issue{Code: CodeSchemaGate, Path: "spec.schemaVersion",
				Message: fmt.Sprintf("controller replica %s already runs schema %d, newer than release %s's schema %d: this would downgrade the controller", r.ID, r.Schema, s.Version, v),
				Fix:     "roll out a release at least as new as the controller's; kcore does not downgrade its schema"})
		}
	}
	return out
}

func first(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[0]
}

func orNever(s string) string {
	if s == "" {
		return "never"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
