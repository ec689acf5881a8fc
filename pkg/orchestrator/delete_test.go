package orchestrator

import (
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/store"
)

func TestTeardownStatePurgesVolumesOnlyWhenAsked(t *testing.T) {
	vol := api.VolumeOp{Name: "k8s-lab-node-11-data", Class: "lvm", Pool: "vg_kcore", Device: "/dev/vg_kcore/k8s-lab-node-11-data",
		SizeBytes: 1 << 30, FSType: "ext4", Role: "filesystem", MountPath: "/mnt/kcore/lab/data"}
	purge := api.Condition{Type: api.ConditionPurgeVolumes, Status: StatusTrue, Reason: "Requested"}
	tests := []struct {
		name  string
		conds []api.Condition
		want  []api.VolumeOp
	}{
		{name: "purge-volumes", conds: []api.Condition{purge}, want: []api.VolumeOp{vol}},
		{name: "default keeps volumes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &Orchestrator{cfg: Config{Keyring: testKeyring(t)}, log: slog.New(slog.DiscardHandler)}
			st := &storedState{
				obj: store.Object{Kind: api.KindNodeState, Name: "lab/node-11", ModifyIndex: 7},
				ns: api.NodeState{Cluster: "lab", NodeID: "node-11", Generation: 3, Volumes: []api.VolumeOp{vol},
					Units: []api.Unit{{Name: "kcore-etcd", Argv: []string{"etcd"}}}},
			}
			c := &api.KubernetesCluster{Status: api.ClusterStatus{Conditions: tt.conds}}
			ops, done, err := o.teardownStep("lab", "node-11", st, nil, false, isTrue(c.Status.Conditions, api.ConditionPurgeVolumes), false, time.Now())
			if err != nil || done || len(ops) != 1 || ops[0].Put == nil {
				t.Fatalf("teardown step: %+v, done %v, %v", ops, done, err)
			}
			var ns api.NodeState
			if err := json.Unmarshal(ops[0].Put.Data, &ns); err != nil {
				t.Fatal(err)
			}
			if ns.Generation != 4 || len(ns.Units)+len(ns.Files)+len(ns.Volumes)+len(ns.Tasks) != 0 {
				t.Fatalf("teardown state not empty: %+v", ns)
			}
			if !reflect.DeepEqual(ns.PurgeVolumes, tt.want) {
				t.Fatalf("purge volumes %+v, want %+v", ns.PurgeVolumes, tt.want)
			}
			if !(&storedState{ns: ns}).empty() {
				t.Fatal("a teardown state that purges volumes is not empty")
			}
		})
	}
}
