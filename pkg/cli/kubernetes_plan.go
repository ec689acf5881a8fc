package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/manifest"
	"kcore.dev/kcore/pkg/plan"
)

// Plan output formats.
const (
	planOutputText = "text"
	planOutputJSON = "json"
)

func newKubernetesPlanCmd(s Streams) *cobra.Command {
	var paths []string
	var prune pruneFlags
	var detailed bool
	var out, output string
	cmd := &cobra.Command{
		Use:   "plan -f FILE|DIR [-f …]",
		Short: "Show what applying KubernetesCluster manifests would do, without changing anything",
		Long: `Compute the plan of KubernetesCluster manifests on the controller and print it:
blocking issues first, then warnings, then every cluster's action (+ create,
~ update, -/+ replace, - delete) with its field diff and the ordered steps
on each node, their disruption and the projected etcd quorum. Nothing is
changed. The plan format is described in docs/plan.md.

--out writes the plan as JSON (the versioned plan format plus the request it
was computed from) for 'kctl kubernetes apply PLAN.json'; -o json prints the
same JSON instead of text.

Exit codes: 0 when the plan has no changes, 1 on an error or a blocked plan,
and with --detailed-exitcode 2 when the plan has changes (otherwise 0).`,
		Example: `  # What would applying this manifest do?
  kctl kubernetes plan -f lab.yaml

  # Save the plan, review it, apply exactly that plan
  kctl kubernetes plan -f lab.yaml --out lab.plan.json
  kctl kubernetes apply lab.plan.json

  # In CI: exit 2 when the directory differs from the controller
  kctl kubernetes plan -f clusters/ --prune --detailed-exitcode`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != planOutputText && output != planOutputJSON {
				return fmt.Errorf("unknown output format %q: want text or json", output)
			}
			req, docs, err := readClusterRequest(s, paths, prune)
			if err != nil {
				return err
			}
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			resp, err := c.Plan(cmdContext(cmd), req)
			if err != nil {
				return fmt.Errorf("compute plan: %w", err)
			}
			saved, err := encodeSavedPlan(resp.Plan, req)
			if err != nil {
				return err
			}
			if out != "" {
				if err := os.WriteFile(out, saved, 0o600); err != nil {
					return fmt.Errorf("write plan: %w", err)
				}
			}
			if output == planOutputJSON {
				_, err = s.Out.Write(saved)
			} else {
				err = printPlan(s, req, locateIssues(docs, withoutManifestWarnings(resp)))
				if err == nil && out != "" {
					_, err = fmt.Fprintf(s.Out, "Plan saved to %s; apply it with: kctl kubernetes apply %s\n", out, out)
				}
			}
			if err != nil {
				return err
			}
			switch {
			case resp.Blocked():
				return &ExitError{Code: 1}
			case detailed && resp.Changes():
				return &ExitError{Code: 2}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&paths, "filename", "f", nil, "manifest file or directory (repeatable; a directory is read recursively; - reads standard input)")
	prune.bind(cmd, "also plan the deletion of stored clusters that no manifest names")
	cmd.Flags().BoolVar(&detailed, "detailed-exitcode", false, "exit 2 when the plan has changes, 0 when it has none, 1 on errors")
	cmd.Flags().StringVar(&out, "out", "", "write the plan as JSON to this file, for kctl kubernetes apply PLAN.json")
	cmd.Flags().StringVarP(&output, "output", "o", planOutputText, "output format: text or json")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// savedPlan is the plan file: the versioned plan format (docs/plan.md) with
// the request it was computed from, so apply can send both back.
type savedPlan struct {
	*plan.Plan
	// Request is what the plan was computed from.
	Request apiv1.PlanRequest `json:"request"`
}

func encodeSavedPlan(p *plan.Plan, req apiv1.PlanRequest) ([]byte, error) {
	b, err := json.MarshalIndent(savedPlan{Plan: p, Request: req}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	return append(b, '\n'), nil
}

// decodeSavedPlan checks the plan's version and hash (plan.Read) and reads
// its request.
func decodeSavedPlan(data []byte) (*savedPlan, error) {
	p, err := plan.Read(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var rest struct {
		Request *apiv1.PlanRequest `json:"request"`
	}
	if err := json.Unmarshal(data, &rest); err != nil {
		return nil, fmt.Errorf("decode plan request: %w", err)
	}
	if rest.Request == nil {
		return nil, errors.New("decode plan: no request field; save plans with kctl kubernetes plan --out")
	}
	return &savedPlan{Plan: p, Request: *rest.Request}, nil
}

// errManifests is returned when the manifests have errors; they were printed.
var errManifests = errors.New("the manifests have errors (listed above): nothing was sent to the controller")

// readManifests reads and checks paths, printing every diagnostic to
// s.Err, and refuses to go on when there is an error.
func readManifests(s Streams, paths []string) ([]*manifest.Document, error) {
	docs, ds := readInputs(s, paths)
	ds = append(ds, manifest.Check(docs)...)
	ds.Sort()
	for _, d := range ds {
		if _, err := fmt.Fprintln(s.Err, d); err != nil {
			return nil, fmt.Errorf("write diagnostics: %w", err)
		}
	}
	if ds.HasErrors() {
		return nil, &ExitError{Code: 1, Err: errManifests}
	}
	return docs, nil
}

// ErrEmptyPrune refuses --prune over manifests that hold no cluster: an
// empty or emptied directory would otherwise plan the deletion of every
// stored cluster.
var ErrEmptyPrune = errors.New("the manifests hold no KubernetesCluster, so --prune would delete every stored cluster: pass --allow-empty if that is what you mean")

// pruneFlags are --prune and --allow-empty.
type pruneFlags struct {
	prune, allowEmpty bool
}

// bind adds the flags to cmd; what says what --prune does there.
func (f *pruneFlags) bind(cmd *cobra.Command, what string) {
	cmd.Flags().BoolVar(&f.prune, "prune", false, what)
	cmd.Flags().BoolVar(&f.allowEmpty, "allow-empty", false, "let --prune act on manifests that hold no cluster (it then deletes every stored cluster)")
}

// readClusterRequest reads KubernetesCluster manifests into a plan request,
// refusing ClusterUpdate documents (kctl apply's kind), and returns the
// documents too.
func readClusterRequest(s Streams, paths []string, prune pruneFlags) (apiv1.PlanRequest, []*manifest.Document, error) {
	docs, err := readManifests(s, paths)
	if err != nil {
		return apiv1.PlanRequest{}, nil, err
	}
	req := apiv1.PlanRequest{Prune: prune.prune}
	for _, d := range docs {
		switch o := d.Object.(type) {
		case *api.KubernetesCluster:
			req.Clusters = append(req.Clusters, *o)
		case *api.ClusterUpdate:
			return apiv1.PlanRequest{}, nil, fmt.Errorf("%s: ClusterUpdate %q is not applied here: use kctl apply -f for ClusterUpdate manifests", d.Pos, d.Name)
		}
	}
	if len(req.Clusters) == 0 && prune.prune && !prune.allowEmpty {
		return apiv1.PlanRequest{}, nil, ErrEmptyPrune
	}
	if len(req.Clusters) == 0 && !prune.prune {
		return apiv1.PlanRequest{}, nil, errors.New("no KubernetesCluster documents in the manifests")
	}
	return req, docs, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
