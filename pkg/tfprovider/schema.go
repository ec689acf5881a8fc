package tfprovider

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"kcore.dev/kcore/pkg/manifest"
	"kcore.dev/kcore/schemas"
)

// Attributes of the resources that are the provider's own, not the manifest's.
const (
	attrID           = "id"
	attrPhase        = "phase"
	attrPlanSteps    = "plan_steps"
	attrWaitReady    = "wait_ready"
	attrTimeout      = "timeout"
	attrPurgeVolumes = "purge_volumes"
	attrForceDelete  = "force_delete"
	attrPlanRef      = "plan_ref"
)

// kindSchema is the generated schema of one resource type with the
// manifest fields it was generated from.
type kindSchema struct {
	resource string
	fields   []manifest.HCLField
	schema   schema.Schema
}

// describer finds a field's description in a JSON Schema by field path.
type describer struct{ root map[string]any }

func newDescriber(file string) (describer, error) {
	data, err := schemas.Read(file)
	if err != nil {
		return describer{}, err
	}
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		return describer{}, fmt.Errorf("decode schema %s: %w", file, err)
	}
	return describer{root: root}, nil
}

// node returns the JSON Schema node under parent for a relative dotted path.
func (d describer) node(parent map[string]any, path string) map[string]any {
	n := parent
	for _, name := range strings.Split(path, ".") {
		if n == nil {
			return nil
		}
		if items, ok := n["items"].(map[string]any); ok && n["type"] == "array" {
			n = items
		}
		props, _ := n["properties"].(map[string]any)
		n, _ = props[name].(map[string]any)
	}
	return n
}

func (d describer) description(n map[string]any) string {
	s, _ := n["description"].(string)
	return s
}

// buildKindSchema generates the schema of resource from the HCL reader's
// fields, adding the provider's own attributes.
func buildKindSchema(resource, schemaFile, what string) (kindSchema, error) {
	fields, err := manifest.HCLSchema(resource)
	if err != nil {
		return kindSchema{}, err
	}
	d, err := newDescriber(schemaFile)
	if err != nil {
		return kindSchema{}, err
	}
	attrs, blocks := convertFields(fields, d, d.root)
	own := map[string]schema.Attribute{
		attrID:    schema.StringAttribute{Computed: true, Description: "The object's name, as the controller knows it."},
		attrPhase: schema.StringAttribute{Computed: true, Description: "The phase the controller reported after the last apply or refresh."},
		attrPlanSteps: schema.ListAttribute{Computed: true, ElementType: types.StringType,
			Description: "kcore's plan for the last change: the action, then one line per step and node (node, component, action, disruption)."},
		attrPlanRef: schema.StringAttribute{Computed: true,
			Description: "The controller plan (raft index and hash) the last change was reviewed as and applied from: apply sends it back and the controller refuses it when anything changed since (stale plan)."},
		attrWaitReady: schema.BoolAttribute{Optional: true,
			Description: "Wait after create and update until the cluster is ready as kctl kubernetes apply --wait sees it (phase ready, its spec rolled out on every node, a current status; an error when it becomes degraded or timeout passes), and after destroy until the object is gone."},
		attrTimeout:      schema.StringAttribute{Optional: true, Description: "How long wait_ready waits, a Go duration (default " + defaultTimeout.String() + ")."},
		attrPurgeVolumes: schema.BoolAttribute{Optional: true, Description: "Destroy also removes the volumes kcore created for the cluster, with their data (like kctl kubernetes delete --purge-volumes). Default false: volumes are kept."},
		attrForceDelete:  schema.BoolAttribute{Optional: true, Description: "Destroy tears the cluster down even where nodes do not answer (like kctl kubernetes delete --force)."},
	}
	for name, a := range own {
		if _, clash := attrs[name]; clash {
			return kindSchema{}, fmt.Errorf("generate schema of %s: the manifest field %s clashes with the provider's own attribute", resource, name)
		}
		attrs[name] = a
	}
	return kindSchema{resource: resource, fields: fields, schema: schema.Schema{
		Description: what + " Attributes and blocks are those of the HCL manifest's resource block.",
		Attributes:  attrs,
		Blocks:      blocks,
	}}, nil
}

// convertFields turns manifest fields into framework attributes and blocks.
// Every attribute the manifest may leave out is optional and computed: the
// plan fills it with the value the controller will store (its default).
func convertFields(fields []manifest.HCLField, d describer, parent map[string]any) (map[string]schema.Attribute, map[string]schema.Block) {
	attrs := map[string]schema.Attribute{}
	blocks := map[string]schema.Block{}
	for _, f := range fields {
		n := d.node(parent, f.Path)
		desc := d.description(n)
		opt, comp := !f.Required, !f.Required
		switch f.Value {
		case manifest.HCLString:
			attrs[f.Name] = schema.StringAttribute{Required: f.Required, Optional: opt, Computed: comp, Description: desc}
		case manifest.HCLBool:
			attrs[f.Name] = schema.BoolAttribute{Required: f.Required, Optional: opt, Computed: comp, Description: desc}
		case manifest.HCLInt:
			attrs[f.Name] = schema.Int64Attribute{Required: f.Required, Optional: opt, Computed: comp, Description: desc}
		case manifest.HCLStringList:
			attrs[f.Name] = schema.ListAttribute{ElementType: types.StringType, Required: f.Required, Optional: opt, Computed: comp, Description: desc}
		case manifest.HCLStringMap:
			attrs[f.Name] = schema.MapAttribute{ElementType: types.StringType, Required: f.Required, Optional: opt, Computed: comp, Description: desc}
		case manifest.HCLBlock:
			a, b := convertFields(f.Fields, d, n)
			blocks[f.Name] = schema.SingleNestedBlock{Attributes: a, Blocks: b, Description: desc}
		case manifest.HCLBlockList:
			a, b := convertFields(f.Fields, d, n)
			blocks[f.Name] = schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{Attributes: a, Blocks: b}, Description: desc}
		}
	}
	return attrs, blocks
}
