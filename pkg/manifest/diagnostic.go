package manifest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// Pos is a position in a manifest file. Line and Column are 1-based; zero means
// unknown. YAML positions carry only the line, except those of syntax errors,
// which point at the offending character; HCL positions also the column.
type Pos struct {
	File   string
	Line   int
	Column int
}

// String formats the position as file:line, or file:line:column when the
// column is known.
func (p Pos) String() string {
	file := p.File
	if file == "" {
		file = "<input>"
	}
	switch {
	case p.Line <= 0:
		return file
	case p.Column <= 0:
		return fmt.Sprintf("%s:%d", file, p.Line)
	default:
		return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Column)
	}
}

// Diagnostic is one problem found in a manifest: where, how bad, which field.
type Diagnostic struct {
	Pos      Pos
	Severity api.Severity
	// Path is the field path, e.g. spec.controlPlaneNodes[1].advertiseAddress;
	// empty for problems that belong to no field (syntax errors, read errors).
	Path    string
	Message string
}

// String formats the diagnostic as
// `cluster.yaml:31: spec.highAvailability.vipAddress: required …`; warnings
// read `cluster.yaml:12: warning: spec.controlPlaneNodes: …`.
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.Pos.String())
	b.WriteString(": ")
	if d.Severity == api.SeverityWarning {
		b.WriteString("warning: ")
	}
	if d.Path != "" {
		b.WriteString(d.Path)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// Diagnostics is a list of problems. It implements error so that a reader can
// return every problem at once; use Err to get a nil error when there are only
// warnings.
type Diagnostics []Diagnostic

// Error joins the diagnostics one per line.
func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	return slices.ContainsFunc(ds, func(d Diagnostic) bool { return d.Severity == api.SeverityError })
}

// Err returns ds as an error when it holds at least one error, else nil.
func (ds Diagnostics) Err() error {
	if ds.HasErrors() {
		return ds
	}
	return nil
}

// Errors returns only the errors.
func (ds Diagnostics) Errors() Diagnostics { return ds.filter(api.SeverityError) }

// Warnings returns only the warnings.
func (ds Diagnostics) Warnings() Diagnostics { return ds.filter(api.SeverityWarning) }

func (ds Diagnostics) filter(s api.Severity) Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == s {
			out = append(out, d)
		}
	}
	return out
}

// Sort orders the diagnostics by file, line and column; ties keep their order.
func (ds Diagnostics) Sort() {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(
			cmp.Compare(a.Pos.File, b.Pos.File),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
		)
	})
}

// diags accumulates diagnostics.
type diags struct{ list Diagnostics }

func (d *diags) errorf(pos Pos, path, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: pos, Severity: api.SeverityError, Path: path, Message: fmt.Sprintf(format, args...)})
}
