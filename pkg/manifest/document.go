package manifest

import (
	"fmt"
	"strings"
)

// Formats a Document can be read from.
const (
	FormatYAML = "yaml"
	FormatHCL  = "hcl"
)

// Document is one object read from a manifest file.
type Document struct {
	// Kind is the canonical kind (api.KindKubernetesCluster or api.KindClusterUpdate).
	Kind string
	// Name is metadata.name (in HCL the name attribute or the block label).
	Name string
	// Pos is where the document starts: its first line in YAML, its resource
	// block in HCL.
	Pos Pos
	// Format is FormatYAML or FormatHCL.
	Format string
	// Object is *api.KubernetesCluster or *api.ClusterUpdate.
	Object any

	// positions maps field paths (metadata.name,
	// spec.controlPlaneNodes[1].advertiseAddress) to where they were written.
	positions map[string]Pos
}

// PosOf returns where the field at fieldPath was written, or where its nearest
// written ancestor was (a missing field is reported at its parent), or the
// document start.
func (d *Document) PosOf(fieldPath string) Pos {
	for p := fieldPath; p != ""; p = parentPath(p) {
		if pos, ok := d.positions[p]; ok {
			return pos
		}
	}
	return d.Pos
}

// setPos records where path was written.
func (d *Document) setPos(path string, pos Pos) {
	if d.positions == nil {
		d.positions = map[string]Pos{}
	}
	d.positions[path] = pos
}

// parentPath strips the last segment: a.b[1].c → a.b[1] → a.b → a → "".
func parentPath(p string) string {
	i := max(strings.LastIndexByte(p, '.'), strings.LastIndexByte(p, '['))
	if i <= 0 {
		return ""
	}
	return p[:i]
}

// join appends a field name to a path.
func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// indexPath names a list element: indexPath("spec.workerNodes", 2) = spec.workerNodes[2].
func indexPath(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }
