package cli

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// wrapWidth is the column explain wraps descriptions at.
const wrapWidth = 80

func newExplainCmd(s Streams) *cobra.Command {
	var recursive bool
	cmd := &cobra.Command{
		Use:   "explain KIND[.FIELD.PATH]",
		Short: "Describe a manifest kind or field: type, default, allowed values, description",
		Long: `Describe a kind or one of its fields from kcore's JSON Schemas, like kubectl explain.

The path starts with the kind (any of its spellings, in any case) followed by
field names in manifest (camelCase) spelling. Lists are stepped into: the
fields of spec.controlPlaneNodes are those of each list element.`,
		Example: `  kctl explain KubernetesCluster
  kctl explain KubernetesCluster.spec.highAvailability
  kctl explain kubernetes-cluster.spec.localProvisioner.volumes
  kctl explain ClusterUpdate.spec.testedOsPins
  kctl explain KubernetesCluster.spec --recursive`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			w := bufio.NewWriter(s.Out)
			if err := explain(w, args[0], recursive); err != nil {
				return fmt.Errorf("explain %s: %w", args[0], err)
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&recursive, "recursive", false, "print every field below the path as an indented tree")
	return cmd
}

// explain writes the description of the kind or field at path to w.
func explain(w io.Writer, path string, recursive bool) error {
	parts := strings.Split(path, ".")
	root, err := loadKindSchema(parts[0])
	if err != nil {
		return err
	}
	n, required, at, err := lookup(root, parts[1:])
	if err != nil {
		return err
	}
	p := &printer{w: w}
	p.linef("KIND:     %s", root.Title)
	if v := root.Properties["apiVersion"]; v != nil && len(v.Enum) == 1 {
		p.linef("VERSION:  %v", v.Enum[0])
	}
	p.linef("")
	if at != "" {
		p.linef("FIELD:    %s <%s>%s", at, n.typeName(), requiredMark(required))
	}
	if n.Default != nil {
		p.linef("DEFAULT:  %v", n.Default)
	}
	if len(n.Enum) > 0 {
		p.linef("ALLOWED:  %s", joinValues(n.Enum))
	}
	if n.Minimum != nil {
		p.linef("MINIMUM:  %s", n.Minimum.String())
	}
	if at != "" || n.Default != nil || len(n.Enum) > 0 || n.Minimum != nil {
		p.linef("")
	}
	p.linef("DESCRIPTION:")
	p.wrap("    ", n.Description)
	fields := n.fields()
	if fields.Properties != nil {
		p.linef("")
		p.linef("FIELDS:")
		if recursive {
			p.tree(fields, "  ")
		} else {
			p.children(fields)
		}
	}
	return p.err
}

// printer writes lines and remembers the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) linef(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

// children lists each child field with its type, markers, default, allowed
// values and description, as kubectl explain does.
func (p *printer) children(n *schemaNode) {
	for i, name := range n.sortedFields() {
		c := n.Properties[name]
		if i > 0 {
			p.linef("")
		}
		p.linef("  %s\t<%s>%s", name, c.typeName(), requiredMark(n.isRequired(name)))
		if c.Default != nil {
			p.linef("    default: %v", c.Default)
		}
		if len(c.Enum) > 0 {
			p.linef("    allowed: %s", joinValues(c.Enum))
		}
		if c.Minimum != nil {
			p.linef("    minimum: %s", c.Minimum.String())
		}
		p.wrap("    ", c.Description)
	}
}

// tree prints every field below n, one per line, indented by depth.
func (p *printer) tree(n *schemaNode, indent string) {
	for _, name := range n.sortedFields() {
		c := n.Properties[name]
		p.linef("%s%s\t<%s>%s", indent, name, c.typeName(), requiredMark(n.isRequired(name)))
		if f := c.fields(); f.Properties != nil {
			p.tree(f, indent+"  ")
		}
	}
}

// wrap writes text as lines of at most wrapWidth columns, each prefixed.
func (p *printer) wrap(prefix, text string) {
	if text == "" {
		p.linef("%s<no description>", prefix)
		return
	}
	line := prefix
	for _, word := range strings.Fields(text) {
		if line != prefix && len(line)+1+len(word) > wrapWidth {
			p.linef("%s", line)
			line = prefix
		}
		if line != prefix {
			line += " "
		}
		line += word
	}
	p.linef("%s", line)
}

func requiredMark(required bool) string {
	if required {
		return " -required-"
	}
	return ""
}

func joinValues(vs []any) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprint(v)
	}
	return strings.Join(out, ", ")
}
