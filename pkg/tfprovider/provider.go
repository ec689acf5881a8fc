package tfprovider

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/kctlconfig"
)

// TypeName is the provider's type name: resources are kcore_….
const TypeName = "kcore"

// Provider is the kcore provider. Its client is built in Configure and
// handed to every resource and data source.
type Provider struct {
	version string
	log     *slog.Logger
}

// New returns a constructor of the provider for providerserver.Serve.
func New(version string, log *slog.Logger) func() provider.Provider {
	return func() provider.Provider { return &Provider{version: version, log: log} }
}

// providerModel is the provider block.
type providerModel struct {
	Addresses  types.List   `tfsdk:"addresses"`
	CAPEM      types.String `tfsdk:"ca_pem"`
	CertPEM    types.String `tfsdk:"cert_pem"`
	KeyPEM     types.String `tfsdk:"key_pem"`
	Context    types.String `tfsdk:"context"`
	ConfigPath types.String `tfsdk:"config_path"`
}

// Metadata names the provider.
func (p *Provider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = TypeName
	resp.Version = p.version
}

// Schema describes the provider block.
func (p *Provider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "kcore: Kubernetes clusters on machines you own, through the kcore controller's API. Configured like kctl: give addresses and credentials, or name a kctl context (the current one when neither is given).",
		Attributes: map[string]schema.Attribute{
			"addresses":   schema.ListAttribute{ElementType: types.StringType, Optional: true, Description: "Controller addresses, host:port or https://host:port. When set, ca_pem, cert_pem and key_pem are required and no kctl config is read."},
			"ca_pem":      schema.StringAttribute{Optional: true, Description: "The controller CA certificate, PEM."},
			"cert_pem":    schema.StringAttribute{Optional: true, Description: "The client certificate, PEM; its organization is the kcore role."},
			"key_pem":     schema.StringAttribute{Optional: true, Sensitive: true, Description: "The client private key, PEM."},
			"context":     schema.StringAttribute{Optional: true, Description: "A kctl context to take the addresses and credentials from (default: the current context)."},
			"config_path": schema.StringAttribute{Optional: true, Description: "The kctl config file (default $KCTL_CONFIG, else ~/.kcore/config)."},
		},
	}
}

// Configure builds the controller client.
func (p *Provider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	cfg, err := clientConfig(ctx, m)
	if err != nil {
		resp.Diagnostics.AddError("kcore provider configuration", err.Error())
		return
	}
	cfg.Logger = p.log
	c, err := client.New(cfg)
	if err != nil {
		resp.Diagnostics.AddError("kcore provider configuration", err.Error())
		return
	}
	resp.ResourceData = c
	resp.DataSourceData = c
}

// clientConfig turns the provider block into a client configuration:
// inline addresses and PEM, or a kctl context.
func clientConfig(ctx context.Context, m providerModel) (client.Config, error) {
	if !m.Addresses.IsNull() && len(m.Addresses.Elements()) > 0 {
		var addrs []string
		if d := m.Addresses.ElementsAs(ctx, &addrs, false); d.HasError() {
			return client.Config{}, fmt.Errorf("read addresses: %v", d)
		}
		if m.CAPEM.ValueString() == "" || m.CertPEM.ValueString() == "" || m.KeyPEM.ValueString() == "" {
			return client.Config{}, fmt.Errorf("configure provider: addresses need ca_pem, cert_pem and key_pem")
		}
		return client.Config{Addresses: addrs, CA: []byte(m.CAPEM.ValueString()), Cert: []byte(m.CertPEM.ValueString()), Key: []byte(m.KeyPEM.ValueString())}, nil
	}
	path, err := kctlconfig.ResolvePath(m.ConfigPath.ValueString(), os.Getenv(kctlconfig.EnvConfig))
	if err != nil {
		return client.Config{}, err
	}
	kc, err := kctlconfig.Load(path)
	if err != nil {
		return client.Config{}, err
	}
	x, err := kc.Current()
	if name := m.Context.ValueString(); name != "" {
		x, err = kc.Context(name)
	}
	if err != nil {
		return client.Config{}, fmt.Errorf("configure provider from %s: %w", path, err)
	}
	creds, err := x.Credentials()
	if err != nil {
		return client.Config{}, fmt.Errorf("configure provider: context %q: %w", x.Name, err)
	}
	return client.Config{Addresses: x.Controllers, CA: creds.CA, Cert: creds.Cert, Key: creds.Key}, nil
}

// Resources lists the resource types.
func (p *Provider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource { return newObjectResource(clusterKind()) },
		func() resource.Resource { return newObjectResource(updateKind()) },
	}
}

// DataSources lists the data sources.
func (p *Provider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		func() datasource.DataSource { return &nodesDataSource{} },
		func() datasource.DataSource { return &clusterStatusDataSource{} },
		func() datasource.DataSource { return &kubeconfigDataSource{} },
	}
}
