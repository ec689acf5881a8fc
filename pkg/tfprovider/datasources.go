package tfprovider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/client"
)

// configureData takes the provider's client for a data source.
func configureData(req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) *client.Client {
	if req.ProviderData == nil {
		return nil
	}
	c, ok := req.ProviderData.(*client.Client)
	if !ok {
		resp.Diagnostics.AddError("configure data source", fmt.Sprintf("unexpected provider data %T", req.ProviderData))
	}
	return c
}

// nodesDataSource is kcore_nodes: the registered nodes.
type nodesDataSource struct{ c *client.Client }

// nodeAttrTypes are the attributes of one kcore_nodes entry.
func nodeAttrTypes() map[string]attr.Type {
	return map[string]attr.Type{
		"name":      types.StringType,
		"hostname":  types.StringType,
		"ready":     types.BoolType,
		"addresses": types.ListType{ElemType: types.StringType},
	}
}

// Metadata names the data source.
func (d *nodesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_nodes"
}

// Schema describes kcore_nodes.
func (d *nodesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The nodes registered with the controller (kctl node list).",
		Attributes: map[string]schema.Attribute{
			"nodes": schema.ListNestedAttribute{Computed: true, Description: "One entry per node, sorted by name.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":      schema.StringAttribute{Computed: true, Description: "The node id."},
					"hostname":  schema.StringAttribute{Computed: true, Description: "The hostname it reported."},
					"ready":     schema.BoolAttribute{Computed: true, Description: "Whether its heartbeats are current."},
					"addresses": schema.ListAttribute{Computed: true, ElementType: types.StringType, Description: "The addresses it reported."},
				}}},
		},
	}
}

// Configure takes the client.
func (d *nodesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.c = configureData(req, resp)
}

// Read lists the nodes.
func (d *nodesDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	l, err := d.c.List(ctx, api.KindNode)
	if err != nil {
		resp.Diagnostics.AddError("read kcore_nodes", err.Error())
		return
	}
	ot := types.ObjectType{AttrTypes: nodeAttrTypes()}
	elems := make([]attr.Value, 0, len(l.Items))
	for _, it := range l.Items {
		var n api.Node
		if err := json.Unmarshal(it.Data, &n); err != nil {
			resp.Diagnostics.AddError("read kcore_nodes", fmt.Sprintf("decode node %s: %v", it.Name, err))
			return
		}
		addrs, diags := types.ListValueFrom(ctx, types.StringType, n.Facts.Addresses)
		resp.Diagnostics.Append(diags...)
		o, diags := types.ObjectValue(nodeAttrTypes(), map[string]attr.Value{
			"name": types.StringValue(it.Name), "hostname": types.StringValue(n.Facts.Hostname),
			"ready": types.BoolValue(n.Status.Ready), "addresses": addrs,
		})
		resp.Diagnostics.Append(diags...)
		elems = append(elems, o)
	}
	list, diags := types.ListValue(ot, elems)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, pathOf("nodes"), list)...)
}

// clusterStatusDataSource is kcore_cluster_status: one cluster's phase.
type clusterStatusDataSource struct{ c *client.Client }

// Metadata names the data source.
func (d *clusterStatusDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster_status"
}

// Schema describes kcore_cluster_status.
func (d *clusterStatusDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A stored cluster's status (kctl kubernetes get): its phase, the generation the controller observed, the Kubernetes version and the whole status as JSON.",
		Attributes: map[string]schema.Attribute{
			"name":                schema.StringAttribute{Required: true, Description: "The cluster's name."},
			"phase":               schema.StringAttribute{Computed: true, Description: "bootstrapping, ready, degraded, updating, scaling or deleting."},
			"generation":          schema.Int64Attribute{Computed: true, Description: "The spec's generation."},
			"observed_generation": schema.Int64Attribute{Computed: true, Description: "The generation the controller last acted on."},
			"kubernetes_version":  schema.StringAttribute{Computed: true, Description: "The Kubernetes version the cluster runs."},
			"status_json":         schema.StringAttribute{Computed: true, Description: "The whole status, as the API returns it."},
		},
	}
}

// Configure takes the client.
func (d *clusterStatusDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.c = configureData(req, resp)
}

// Read reads the cluster.
func (d *clusterStatusDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var name types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, pathOf("name"), &name)...)
	if resp.Diagnostics.HasError() {
		return
	}
	o, err := d.c.Get(ctx, api.KindKubernetesCluster, name.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("read kcore_cluster_status", err.Error())
		return
	}
	var kc api.KubernetesCluster
	if err := json.Unmarshal(o.Data, &kc); err != nil {
		resp.Diagnostics.AddError("read kcore_cluster_status", err.Error())
		return
	}
	st, err := json.Marshal(kc.Status)
	if err != nil {
		resp.Diagnostics.AddError("read kcore_cluster_status", err.Error())
		return
	}
	for k, v := range map[string]attr.Value{
		"name": name, "phase": types.StringValue(kc.Status.Phase),
		"generation":          types.Int64Value(kc.Metadata.Generation),
		"observed_generation": types.Int64Value(kc.Status.ObservedGeneration),
		"kubernetes_version":  types.StringValue(kc.Status.KubernetesVersion),
		"status_json":         types.StringValue(string(st)),
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, pathOf(k), v)...)
	}
}

// kubeconfigDataSource is kcore_kubeconfig: a kubeconfig the controller issues.
type kubeconfigDataSource struct{ c *client.Client }

// Metadata names the data source.
func (d *kubeconfigDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_kubeconfig"
}

// Schema describes kcore_kubeconfig.
func (d *kubeconfigDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A kubeconfig for a cluster, with a client certificate the controller issues to the caller (kctl kubernetes kubeconfig). Every read issues a new certificate.",
		Attributes: map[string]schema.Attribute{
			"cluster":    schema.StringAttribute{Required: true, Description: "The cluster's name."},
			"ttl":        schema.StringAttribute{Optional: true, Description: "How long the certificate is valid, a Go duration (default: the controller's)."},
			"kubeconfig": schema.StringAttribute{Computed: true, Sensitive: true, Description: "The kubeconfig file, with the client key inline."},
			"user":       schema.StringAttribute{Computed: true, Description: "The Kubernetes user the certificate names."},
			"expires":    schema.StringAttribute{Computed: true, Description: "The certificate's expiry, RFC 3339."},
		},
	}
}

// Configure takes the client.
func (d *kubeconfigDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.c = configureData(req, resp)
}

// Read asks the controller for the kubeconfig.
func (d *kubeconfigDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var cluster, ttl types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, pathOf("cluster"), &cluster)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, pathOf("ttl"), &ttl)...)
	if resp.Diagnostics.HasError() {
		return
	}
	kc, err := d.c.Kubeconfig(ctx, cluster.ValueString(), ttl.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("read kcore_kubeconfig", err.Error())
		return
	}
	for k, v := range map[string]attr.Value{
		"cluster": cluster, "ttl": ttl, "kubeconfig": types.StringValue(kc.Kubeconfig),
		"user": types.StringValue(kc.User), "expires": types.StringValue(kc.Expires),
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, pathOf(k), v)...)
	}
}
