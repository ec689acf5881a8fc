package gitops

import (
	"errors"
	"fmt"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/manifest"
)

// maxShownDiagnostics bounds the manifest errors a status message lists.
const maxShownDiagnostics = 5

// ErrManifest: the commit's manifests do not parse or validate.
var ErrManifest = errors.New("invalid manifests")

// desired is what a commit declares.
type desired struct {
	clusters []api.KubernetesCluster
	updates  []api.ClusterUpdate
}

// empty reports whether the commit declares no object.
func (d desired) empty() bool { return len(d.clusters) == 0 && len(d.updates) == 0 }

// parse reads, defaults and validates a snapshot's manifests as kctl
// reads a directory (pkg/manifest), both kinds, YAML and HCL.
func parse(snap Snapshot) (desired, error) {
	var docs []*manifest.Document
	var ds manifest.Diagnostics
	for _, f := range snap.Files {
		d, fd := manifest.Parse(f.Path, f.Data)
		docs = append(docs, d...)
		ds = append(ds, fd...)
	}
	first := map[string]*manifest.Document{}
	for _, d := range docs {
		key := d.Kind + "/" + d.Name
		if f, ok := first[key]; ok && d.Name != "" {
			ds = append(ds, manifest.Diagnostic{Severity: api.SeverityError, Pos: d.PosOf("metadata.name"), Path: "metadata.name",
				Message: fmt.Sprintf("%s %q is already declared at %s", d.Kind, d.Name, f.PosOf("metadata.name"))})
		}
		first[key] = d
	}
	if !ds.HasErrors() {
		ds = append(ds, manifest.Check(docs)...)
	}
	if errs := ds.Errors(); len(errs) > 0 {
		errs.Sort()
		lines := make([]string, 0, maxShownDiagnostics)
		for i, d := range errs {
			if i == maxShownDiagnostics {
				lines = append(lines, fmt.Sprintf("and %d more", len(errs)-i))
				break
			}
			lines = append(lines, d.String())
		}
		return desired{}, fmt.Errorf("%w: %s", ErrManifest, strings.Join(lines, "; "))
	}
	var out desired
	for _, d := range docs {
		switch o := d.Object.(type) {
		case *api.KubernetesCluster:
			out.clusters = append(out.clusters, *o)
		case *api.ClusterUpdate:
			out.updates = append(out.updates, *o)
		}
	}
	return out, nil
}
