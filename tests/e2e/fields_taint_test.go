package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// cpTaint is the taint control planes carry unless scheduleOnControlPlane.
const cpTaint = "node-role.kubernetes.io/control-plane:NoSchedule"

// testScheduleOnControlPlane: a cluster whose control planes do not run
// pods needs a worker, so the spare namespace joins as worker lab-n4
// (kctl kubernetes scale) first. scheduleOnControlPlane false then plans,
// on each control plane, a kubelet restart and the Node taint the
// orchestrator adds, and Kubernetes shows the taint on the three control
// planes and not on the worker; true again removes it. The worker leaves
// at the end, so the lab is back to three nodes.
func testScheduleOnControlPlane(t *testing.T, l *lab) {
	start := time.Now()
	if out, err := l.kctl(fieldApplyTimeout+time.Minute, "kubernetes", "scale", cluster, "--add-workers", spareNode+":"+spareAddr+":eth0",
		"--yes", "--wait", "--timeout", fieldApplyTimeout.String()); err != nil {
		t.Fatalf("scale out by worker %s: %v\n%s", spareNode, err, out)
	}
	eventually(t, "four nodes Ready", 2*time.Minute, func() error { return l.nodesReady("lab-n1", "lab-n2", "lab-n3", spareNode) })
	t.Logf("worker %s joined in %s", spareNode, time.Since(start).Round(100*time.Millisecond))
	withWorker := edit(t, l.labManifest(t), "  highAvailability:", "  workerNodes:\n    - nodeId: "+spareNode+"\n      advertiseAddress: "+spareAddr+"\n      iface: eth0\n  highAvailability:")
	for _, schedule := range []bool{false, true} {
		src := edit(t, withWorker, "scheduleOnControlPlane: true", fmt.Sprintf("scheduleOnControlPlane: %t", schedule))
		p, _ := l.applyField(t, src)
		change := "added"
		if schedule {
			change = "removed"
		}
		for _, n := range labNodes() {
			s := p.step(n.id, "kubelet")
			want := "Node " + n.id + ": taint " + cpTaint + " " + change
			if !s.has("unit", "kcore-kubelet") || !strings.Contains(s.Detail, want) {
				t.Errorf("%s: the plan's kubelet step does not say %q: %+v", n.id, want, s)
			}
		}
		if s := p.step(spareNode, "kubelet"); s != nil {
			t.Errorf("the plan changes the worker's kubelet: %+v", s)
		}
		eventually(t, fmt.Sprintf("control-plane taints with scheduleOnControlPlane %t", schedule), time.Minute, func() error {
			taints, err := l.nodeTaints()
			if err != nil {
				return err
			}
			for _, n := range labNodes() {
				if has := slices.Contains(taints[n.id], cpTaint); has == schedule {
					return fmt.Errorf("%s has taints %v", n.id, taints[n.id])
				}
			}
			if slices.Contains(taints[spareNode], cpTaint) {
				return fmt.Errorf("worker %s has taints %v", spareNode, taints[spareNode])
			}
			return nil
		})
	}
	if out, err := l.kctl(fieldApplyTimeout+time.Minute, "kubernetes", "scale", cluster, "--remove", spareNode, "--yes", "--wait", "--timeout", fieldApplyTimeout.String()); err != nil {
		t.Fatalf("scale in: %v\n%s", err, out)
	}
	eventually(t, "the node list back to three", 2*time.Minute, func() error { return l.nodesReady("lab-n1", "lab-n2", "lab-n3") })
	eventually(t, "cluster ready", fieldReadyTimeout, l.healthy)
}

// nodeTaints are each Kubernetes node's taints as key:effect.
func (l *lab) nodeTaints() (map[string][]string, error) {
	out, err := l.kubectl("get", "nodes", "-o", "json")
	if err != nil {
		return nil, err
	}
	var nl struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Taints []struct {
					Key    string `json:"key"`
					Effect string `json:"effect"`
				} `json:"taints"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &nl); err != nil {
		return nil, fmt.Errorf("decode nodes: %w", err)
	}
	taints := map[string][]string{}
	for _, n := range nl.Items {
		for _, tn := range n.Spec.Taints {
			taints[n.Metadata.Name] = append(taints[n.Metadata.Name], tn.Key+":"+tn.Effect)
		}
	}
	return taints, nil
}
