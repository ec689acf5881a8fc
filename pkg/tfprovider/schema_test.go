package tfprovider

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/manifest"
)

// TestSchemaIsTheReaders: every attribute and block the HCL reader accepts
// is in the generated schema, of the same shape, with a description from
// the JSON Schema, and nothing else is besides the provider's own.
func TestSchemaIsTheReaders(t *testing.T) {
	for _, k := range []kind{clusterKind(), updateKind()} {
		ks, err := buildKindSchema(k.resource, k.schemaFile, k.what)
		if err != nil {
			t.Fatal(err)
		}
		fields, err := manifest.HCLSchema(k.resource)
		if err != nil {
			t.Fatal(err)
		}
		own := map[string]bool{attrID: true, attrPhase: true, attrPlanSteps: true, attrPlanRef: true, attrWaitReady: true, attrTimeout: true, attrPurgeVolumes: true, attrForceDelete: true}
		checkFields(t, k.resource, fields, ks.schema.Attributes, ks.schema.Blocks, own)
	}
}

func checkFields(t *testing.T, where string, fields []manifest.HCLField, attrs map[string]schema.Attribute, blocks map[string]schema.Block, own map[string]bool) {
	t.Helper()
	if got, want := len(attrs)+len(blocks), len(fields)+len(own); got != want {
		t.Errorf("%s: %d attributes and blocks, want %d (the reader's) + %d (the provider's)", where, got, len(fields), len(own))
	}
	for _, f := range fields {
		name := where + "." + f.Name
		switch f.Value {
		case manifest.HCLBlock:
			b, ok := blocks[f.Name].(schema.SingleNestedBlock)
			if !ok {
				t.Errorf("%s: not a single nested block: %T", name, blocks[f.Name])
				continue
			}
			checkFields(t, name, f.Fields, b.Attributes, b.Blocks, nil)
		case manifest.HCLBlockList:
			b, ok := blocks[f.Name].(schema.ListNestedBlock)
			if !ok {
				t.Errorf("%s: not a list nested block: %T", name, blocks[f.Name])
				continue
			}
			checkFields(t, name, f.Fields, b.NestedObject.Attributes, b.NestedObject.Blocks, nil)
		default:
			a, ok := attrs[f.Name]
			if !ok {
				t.Errorf("%s: missing", name)
				continue
			}
			if a.GetDescription() == "" {
				t.Errorf("%s: no description from the JSON Schema", name)
			}
			if a.IsRequired() != f.Required || a.IsComputed() == f.Required {
				t.Errorf("%s: required %v computed %v, want required %v", name, a.IsRequired(), a.IsComputed(), f.Required)
			}
		}
	}
}

func TestTFPath(t *testing.T) {
	fields, err := manifest.HCLSchema(manifest.ResourceKubernetesCluster)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]path.Path{
		"metadata.name":              path.Root("name"),
		"spec.cni":                   path.Root("cni"),
		"spec.workerNodes[1].nodeId": path.Root("worker_node").AtListIndex(1).AtName("node_id"),
		"spec.localProvisioner.volumes[2].sizeBytes":    path.Root("local_provisioner").AtName("volume").AtListIndex(2).AtName("size_bytes"),
		"spec.apiServer.extraArgs.audit-log-maxage":     path.Root("api_server").AtName("extra_args").AtMapKey("audit-log-maxage"),
		"spec.cilium.loadBalancerIpPools[0]":            path.Root("cilium").AtName("load_balancer_ip_pools").AtListIndex(0),
		"spec.highAvailability.vipAddress":              path.Root("high_availability").AtName("vip_address"),
		"spec.registryMirrors[0].endpoints[3]":          path.Root("registry_mirror").AtListIndex(0).AtName("endpoints").AtListIndex(3),
		"spec.controlPlaneNodes[0].advertiseAddress":    path.Root("control_plane_node").AtListIndex(0).AtName("advertise_address"),
		"spec.localProvisioner.storageClassName":        path.Root("local_provisioner").AtName("storage_class_name"),
		"spec.scheduler.extraArgs.leader-elect":         path.Root("scheduler").AtName("extra_args").AtMapKey("leader-elect"),
		"spec.controllerManager.extraArgs.bind-address": path.Root("controller_manager").AtName("extra_args").AtMapKey("bind-address"),
	} {
		got, ok := tfPath(fields, in)
		if !ok || !got.Equal(want) {
			t.Errorf("tfPath(%s) = %s, %v; want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "spec", "spec.nope", "status.phase", "spec.workerNodes[x"} {
		if got, ok := tfPath(fields, in); ok {
			t.Errorf("tfPath(%q) = %s, want none", in, got)
		}
	}
}

// TestRoundTrip: a cluster turned into a resource value and back is the
// same cluster, and so is a ClusterUpdate.
func TestRoundTrip(t *testing.T) {
	yes := true
	kc := &api.KubernetesCluster{
		Kind:     api.KindKubernetesCluster,
		Metadata: api.ObjectMeta{Name: "lab", Labels: map[string]string{"team": "ops"}},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/16", APIServerEndpoint: "10.0.0.100:6443",
			Cilium:            api.CiliumSpec{MTU: 1450, AutoDirectNodeRoutes: &yes, LoadBalancerIPPools: []string{"10.0.1.0/28"}},
			ControlPlaneNodes: []api.ClusterNode{{NodeID: "a", AdvertiseAddress: "10.0.0.1"}, {NodeID: "b", AdvertiseAddress: "10.0.0.2", Iface: "eth0"}},
			LocalProvisioner:  api.LocalProvisionerSpec{Enabled: true, Volumes: []api.VolumeSpec{{Name: "data", NodeID: "a", StorageClass: "lvm", SizeBytes: 10 << 30}}},
			APIServer:         api.ComponentSpec{ExtraArgs: map[string]string{"audit-log-maxage": "30"}},
		},
	}
	cu := &api.ClusterUpdate{Kind: api.KindClusterUpdate, Metadata: api.ObjectMeta{Name: "u1"}, Spec: api.UpdateSpec{Version: "0.5.0", Nodes: []string{"a"}, MaxUnavailable: 1}}
	for _, tc := range []struct {
		k   kind
		obj object
	}{{clusterKind(), kc}, {updateKind(), cu}} {
		ks, err := buildKindSchema(tc.k.resource, tc.k.schemaFile, tc.k.what)
		if err != nil {
			t.Fatal(err)
		}
		typ, ok := ks.schema.Type().TerraformType(context.Background()).(tftypes.Object)
		if !ok {
			t.Fatal("schema type is not an object")
		}
		doc, err := fromObject(tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := valuesFrom(doc, ks.fields, typ, tftypes.NewValue(typ, nil), shapeImport)
		if err != nil {
			t.Fatal(err)
		}
		for name, at := range typ.AttributeTypes {
			if _, ok := vals[name]; !ok {
				vals[name] = tftypes.NewValue(at, nil)
			}
		}
		back := tc.k.newObject()
		if err := decodeInto(tftypes.NewValue(typ, vals), ks.fields, back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, tc.obj) {
			t.Errorf("%s round trip:\n got %+v\nwant %+v", tc.k.resource, back, tc.obj)
		}
	}
}
