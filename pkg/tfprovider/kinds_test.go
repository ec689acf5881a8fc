package tfprovider

import (
	"reflect"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
)

// TestDeleteRequests: destroy goes through plan and apply for both kinds,
// since the controller refuses a raw DELETE of either: a cluster's teardown
// carries the force and purge options, a ClusterUpdate's removal names it
// in DeleteUpdates (kctl update delete) and never as a cluster.
func TestDeleteRequests(t *testing.T) {
	o := options{force: true, purge: true}
	for _, tt := range []struct {
		k    kind
		want apiv1.PlanRequest
	}{
		{clusterKind(), apiv1.PlanRequest{Delete: []string{"x"}, Force: true, PurgeVolumes: true}},
		{updateKind(), apiv1.PlanRequest{DeleteUpdates: []string{"x"}}},
	} {
		if got := tt.k.deleteRequest("x", o); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: delete request %+v, want %+v", tt.k.resource, got, tt.want)
		}
	}
}
