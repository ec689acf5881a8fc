package tfprovider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/manifest"
)

// Private state keys.
const (
	// privatePlan holds the reviewed plan's index and hash (planRef).
	privatePlan = "kcore_plan"
	// privateImport marks a state just imported: the next read takes every
	// block the controller stores.
	privateImport = "kcore_import"
)

// planRef is what apply sends back: the plan the user reviewed.
type planRef struct {
	Index uint64 `json:"index"`
	Hash  string `json:"hash"`
}

// objectResource is kcore_kubernetes_cluster or kcore_cluster_update.
type objectResource struct {
	k  kind
	ks kindSchema
	c  *client.Client
}

var (
	_ resource.ResourceWithConfigure   = (*objectResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*objectResource)(nil)
	_ resource.ResourceWithImportState = (*objectResource)(nil)
)

func newObjectResource(k kind) resource.Resource { return &objectResource{k: k} }

// Metadata names the resource type.
func (r *objectResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = r.k.resource
}

// Schema generates the schema from the HCL reader's fields.
func (r *objectResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	ks, err := buildKindSchema(r.k.resource, r.k.schemaFile, r.k.what)
	if err != nil {
		resp.Diagnostics.AddError("generate schema", err.Error())
		return
	}
	r.ks = ks
	resp.Schema = ks.schema
}

// Configure takes the provider's client.
func (r *objectResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		return
	}
	c, ok := req.ProviderData.(*client.Client)
	if !ok {
		resp.Diagnostics.AddError("configure resource", fmt.Sprintf("unexpected provider data %T", req.ProviderData))
		return
	}
	r.c = c
	if r.ks.fields == nil {
		ks, err := buildKindSchema(r.k.resource, r.k.schemaFile, r.k.what)
		if err != nil {
			resp.Diagnostics.AddError("generate schema", err.Error())
			return
		}
		r.ks = ks
	}
}

// options are the provider's own attributes of a resource value.
type options struct {
	wait    bool
	timeout time.Duration
	purge   bool
	force   bool
}

func readOptions(v tftypes.Value) (options, error) {
	attrs, err := objectAttrs(v)
	if err != nil {
		return options{}, err
	}
	o := options{timeout: defaultTimeout}
	for name, dst := range map[string]*bool{attrWaitReady: &o.wait, attrPurgeVolumes: &o.purge, attrForceDelete: &o.force} {
		if a := attrs[name]; !a.IsNull() && a.IsKnown() {
			if err := a.As(dst); err != nil {
				return options{}, err
			}
		}
	}
	if a := attrs[attrTimeout]; !a.IsNull() && a.IsKnown() {
		var s string
		if err := a.As(&s); err != nil {
			return options{}, err
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return options{}, fmt.Errorf("timeout %q: want a positive Go duration such as 30m", s)
		}
		o.timeout = d
	}
	return o, nil
}

// decode reads the object a configuration or plan value describes.
func (r *objectResource) decode(v tftypes.Value) (object, error) {
	obj := r.k.newObject()
	if err := decodeInto(v, r.ks.fields, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// Create applies the reviewed plan that creates the object.
func (r *objectResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	state, diags := r.apply(ctx, req.Config.Raw, req.Plan.Raw, tftypes.Value{}, nil)
	resp.Diagnostics.Append(diags...)
	if !diags.HasError() {
		resp.State.Raw = state
	}
}

// Update applies the reviewed plan that changes the object.
func (r *objectResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	ref, _ := req.Private.GetKey(ctx, privatePlan)
	state, diags := r.apply(ctx, req.Config.Raw, req.Plan.Raw, req.State.Raw, ref)
	resp.Diagnostics.Append(diags...)
	if !diags.HasError() {
		resp.State.Raw = state
	}
}

// Read refreshes the state from the controller: the object gone removes
// it; a stored spec that differs from the state's (drift) replaces the
// state's values with the stored ones.
func (r *objectResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root(attrID), &id)...)
	if resp.Diagnostics.HasError() {
		return
	}
	stored, err := r.get(ctx, id.ValueString())
	if errors.Is(err, client.ErrNotFound) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("read "+r.k.resource, err.Error())
		return
	}
	imported, _ := req.Private.GetKey(ctx, privateImport)
	mode := shapeRead
	if imported != nil {
		mode = shapeImport
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateImport, nil)...)
	}
	state := req.State.Raw
	if mode == shapeImport || r.drifted(state, stored) {
		doc, err := fromObject(stored)
		if err == nil && mode == shapeImport {
			err = r.dropDefaultBlocks(doc)
		}
		if err == nil {
			state, err = r.withFields(state, doc, state, mode)
		}
		if err != nil {
			resp.Diagnostics.AddError("read "+r.k.resource, err.Error())
			return
		}
	}
	state, err = withAttrs(state, map[string]tftypes.Value{
		attrID:    tftypes.NewValue(tftypes.String, id.ValueString()),
		attrPhase: tftypes.NewValue(tftypes.String, r.k.phase(stored)),
	})
	if err != nil {
		resp.Diagnostics.AddError("read "+r.k.resource, err.Error())
		return
	}
	resp.State.Raw = state
}

// drifted reports whether the stored object's spec and labels differ from
// the ones the state describes once defaulted.
func (r *objectResource) drifted(state tftypes.Value, stored object) bool {
	mine, err := r.decode(state)
	if err != nil {
		return true
	}
	mine.Default()
	a, errA := fromObject(mine)
	b, errB := fromObject(stored)
	if errA != nil || errB != nil {
		return true
	}
	for _, p := range []string{"spec", "metadata.labels"} {
		x, _ := lookup(a, p)
		y, _ := lookup(b, p)
		if !reflect.DeepEqual(x, y) {
			return true
		}
	}
	return false
}

// withFields returns base with the manifest fields built from doc.
func (r *objectResource) withFields(base tftypes.Value, doc map[string]any, shape tftypes.Value, mode shapeMode) (tftypes.Value, error) {
	typ, ok := base.Type().(tftypes.Object)
	if !ok {
		return tftypes.Value{}, fmt.Errorf("state is a %s, not an object", base.Type())
	}
	vals, err := valuesFrom(doc, r.ks.fields, typ, shape, mode)
	if err != nil {
		return tftypes.Value{}, err
	}
	return withAttrs(base, vals)
}

// get reads the stored object.
func (r *objectResource) get(ctx context.Context, name string) (object, error) {
	o, err := r.c.Get(ctx, r.k.apiKind, name)
	if err != nil {
		return nil, fmt.Errorf("get %s %s: %w", r.k.apiKind, name, err)
	}
	obj := r.k.newObject()
	if err := json.Unmarshal(o.Data, obj); err != nil {
		return nil, fmt.Errorf("decode %s %s: %w", r.k.apiKind, name, err)
	}
	return obj, nil
}

// ImportState adopts a stored object by name.
func (r *objectResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attrID), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateImport, []byte("true"))...)
}

// dropDefaultBlocks removes from an imported document the top-level blocks
// that hold nothing but what the controller fills into an empty object, so
// a configuration that leaves them out plans no change after import.
func (r *objectResource) dropDefaultBlocks(doc map[string]any) error {
	empty := r.k.newObject()
	empty.Default()
	base, err := fromObject(empty)
	if err != nil {
		return err
	}
	for _, f := range r.ks.fields {
		if f.Value != manifest.HCLBlock {
			continue
		}
		mine, _ := lookup(doc, f.Path)
		def, _ := lookup(base, f.Path)
		section, name, _ := strings.Cut(f.Path, ".")
		if m, ok := doc[section].(map[string]any); ok && reflect.DeepEqual(mine, def) {
			delete(m, name)
		}
	}
	return nil
}
