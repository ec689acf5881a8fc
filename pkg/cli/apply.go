package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/rollout"
)

func newApplyCmd(s Streams) *cobra.Command {
	var paths []string
	var f applyFlags
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR [-f …]",
		Short: "Show the plan for ClusterUpdate manifests, ask y/n, and apply it",
		Long: `Apply manifests of the kinds other than KubernetesCluster — ClusterUpdate
today — with the same review as 'kctl kubernetes apply': the controller
computes the plan (create, update with the field diff, or no change) and the
rollout each update will run (order, steps, disruptions; docs/updates.md),
kctl prints them, asks "Apply this plan? [y/N]" and applies exactly that
plan. A rollout's blocking issues keep it from starting, not from being
stored.

KubernetesCluster documents are refused: apply them with
'kctl kubernetes apply', which plans their nodes, etcd quorum and volumes.

Manifest errors are printed with file:line and nothing is sent. Only "y" or
"yes" applies; without a terminal on standard input --yes is required. A
plan that became stale before it was applied is refused: run it again.
An operator may apply ClusterUpdates; approving one is 'kctl update approve'.`,
		Example: `  # Store a ClusterUpdate written in HCL or YAML
  kctl apply -f release-0-5-0.hcl

  # A directory of updates, one plan and one question
  kctl apply -f updates/

  # Without asking (CI)
  kctl apply -f updates/ --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			docs, err := readManifests(s, paths)
			if err != nil {
				return err
			}
			var req apiv1.PlanRequest
			for _, d := range docs {
				switch o := d.Object.(type) {
				case *api.ClusterUpdate:
					req.Updates = append(req.Updates, *o)
				case *api.KubernetesCluster:
					return fmt.Errorf("%s: KubernetesCluster %q is not applied here: use kctl kubernetes apply -f for KubernetesCluster manifests", d.Pos, d.Name)
				}
			}
			if len(req.Updates) == 0 {
				return errors.New("no ClusterUpdate documents in the manifests")
			}
			return review(cmd, s, req, docs, f, "Apply this plan?")
		},
	}
	cmd.Flags().StringArrayVarP(&paths, "filename", "f", nil, "manifest file or directory (repeatable; a directory is read recursively; - reads standard input)")
	_ = cmd.MarkFlagRequired("filename")
	f.bind(cmd, false)
	return cmd
}

// printUpdatePlan prints a plan of ClusterUpdates: its issues as pkg/plan
// prints them, each update's action and field diff followed by the rollout
// it will run as pkg/rollout prints it (whose blocking issues stop the
// rollout, not the storing), and a summary.
func printUpdatePlan(s Streams, resp *apiv1.PlanResponse, color bool) error {
	if len(resp.Plan.Blocking) > 0 || len(resp.Plan.Warnings) > 0 {
		issues := &plan.Plan{Blocking: resp.Plan.Blocking, Warnings: resp.Plan.Warnings}
		if err := writeIssues(s, issues, color); err != nil {
			return err
		}
	}
	counts := map[string]int{}
	for _, u := range resp.Updates {
		counts[u.Action]++
		var head string
		switch u.Action {
		case apiv1.UpdateCreate:
			head = fmt.Sprintf("+ create ClusterUpdate %q", u.Name)
		case apiv1.UpdateUpdate:
			head = fmt.Sprintf("~ update ClusterUpdate %q", u.Name)
		case apiv1.UpdateDelete:
			head = fmt.Sprintf("- delete ClusterUpdate %q (its status and step history go with it)", u.Name)
		default:
			head = fmt.Sprintf("  no changes to ClusterUpdate %q", u.Name)
		}
		lines := []string{head}
		if u.Action == apiv1.UpdateCreate && u.Desired != nil {
			sp := u.Desired.Spec
			lines = append(lines, fmt.Sprintf("    version %s · %s · strategy %s · approval %s", sp.Version, sp.UpdateKind, sp.Strategy, sp.Approval))
		}
		for _, d := range u.Diff {
			switch {
			case d.Old == "":
				lines = append(lines, fmt.Sprintf("    + %s: %q", d.Path, d.New))
			case d.New == "":
				lines = append(lines, fmt.Sprintf("    - %s: %q", d.Path, d.Old))
			default:
				lines = append(lines, fmt.Sprintf("    ~ %s: %q → %q", d.Path, d.Old, d.New))
			}
		}
		for _, l := range append(lines, "") {
			if _, err := fmt.Fprintln(s.Out, l); err != nil {
				return err
			}
		}
		if u.Rollout != nil {
			if err := rollout.WriteText(s.Out, u.Rollout, color); err != nil {
				return err
			}
			if _, err := fmt.Fprintln(s.Out); err != nil {
				return err
			}
		}
	}
	summary := fmt.Sprintf("Plan: %d to create, %d to update.", counts[apiv1.UpdateCreate], counts[apiv1.UpdateUpdate])
	if n := counts[apiv1.UpdateDelete]; n > 0 {
		summary = fmt.Sprintf("Plan: %d to create, %d to update, %d to delete.", counts[apiv1.UpdateCreate], counts[apiv1.UpdateUpdate], n)
	}
	if !resp.Changes() {
		summary = "No changes. The stored ClusterUpdates match the manifests."
	}
	if _, err := fmt.Fprintln(s.Out, summary); err != nil {
		return err
	}
	if n := len(resp.Plan.Blocking); n > 0 {
		_, err := fmt.Fprintf(s.Out, "Blocked by %s: nothing will be applied.\n", plural(n, "issue"))
		return err
	}
	return nil
}

// writeIssues prints only the blocking issues and warnings of p, the way
// pkg/plan prints them, without its summary lines about clusters.
func writeIssues(s Streams, p *plan.Plan, color bool) error {
	var buf bytes.Buffer
	if err := plan.WriteText(&buf, p, color); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	for len(lines) > 0 {
		last := lines[len(lines)-1]
		if !strings.Contains(last, "No changes.") && !strings.Contains(last, "Blocked by ") {
			break
		}
		lines = lines[:len(lines)-1]
	}
	_, err := fmt.Fprintln(s.Out, strings.Join(lines, "\n"))
	return err
}
