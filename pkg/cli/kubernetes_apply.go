package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/manifest"
	"kcore.dev/kcore/pkg/plan"
)

// ErrStalePlan is returned when the controller refuses a plan because its
// state changed after the plan was computed.
var ErrStalePlan = errors.New("the controller's state changed since this plan was computed; run the command again to see the new plan")

// ErrForbiddenApply is returned before a plan is printed when the caller's
// role may not apply it, so nobody reviews a plan they cannot carry out.
var ErrForbiddenApply = errors.New("your role may not apply this plan")

// ErrNoConfirmation is returned when a plan needs a yes and nobody can give
// one: standard input is not a terminal and --yes was not passed.
var ErrNoConfirmation = errors.New("refusing to apply without confirmation: standard input is not a terminal; pass --yes to apply the plan shown above without asking")

// defaultWaitTimeout is --timeout's default.
const defaultWaitTimeout = 15 * time.Minute

// applyFlags are the review and wait flags of apply, scale and delete.
type applyFlags struct {
	yes     bool
	wait    bool
	timeout time.Duration
}

func (f *applyFlags) bind(cmd *cobra.Command, withWait bool) {
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "apply without asking (blocking issues still stop the apply)")
	if withWait {
		cmd.Flags().BoolVar(&f.wait, "wait", false, "follow the cluster through its phases until it is ready (exit 0) or degraded (exit 1)")
		cmd.Flags().DurationVar(&f.timeout, "timeout", defaultWaitTimeout, "how long --wait follows the cluster before giving up (exit 1)")
	}
}

func newKubernetesApplyCmd(s Streams) *cobra.Command {
	var paths []string
	var prune pruneFlags
	var f applyFlags
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR [-f …] | apply PLAN.json",
		Short: "Show the plan for KubernetesCluster manifests, ask y/n, and apply it",
		Long: `Compute the plan of KubernetesCluster manifests on the controller, print it,
ask "Apply this plan? [y/N]" and apply exactly that plan.

The manifests are read and checked locally first (YAML, HCL or a directory of
them, read as 'kctl kubernetes validate' does); any error is printed with its
file:line and nothing is sent. ClusterUpdate documents are refused here: apply
them with 'kctl apply -f'.

The plan lists blocking issues first, then warnings, then what happens to each
cluster and on which node. A blocked plan is never applied (exit 1). A plan
without changes says "No changes." and exits 0 without writing anything.
Only "y" or "yes" applies; anything else, or end of input, cancels (exit 1).
Without a terminal on standard input the command refuses unless --yes is
given. The controller recomputes the plan when it is applied and refuses it
(exit 1) when anything changed since it was shown: run the command again.

A directory is one plan and one question (GitOps). --prune adds the deletion
of every stored cluster that no manifest names; without it nothing is ever
deleted.

'kctl kubernetes apply PLAN.json' applies a plan saved by 'kctl kubernetes plan
--out', and is refused when the stored state changed since it was made.

With --wait the command follows each changed cluster through its phases and
exits 0 when it is ready, 1 when it ends degraded or --timeout passes.`,
		Example: `  # Review and apply one cluster
  kctl kubernetes apply -f lab.yaml

  # Apply a GitOps directory as one plan, deleting clusters no longer in it
  kctl kubernetes apply -f clusters/ --prune

  # In CI: no question, wait until the cluster is ready
  kctl kubernetes apply -f lab.yaml --yes --wait --timeout 30m

  # Apply a plan reviewed earlier
  kctl kubernetes plan -f lab.yaml --out lab.plan.json
  kctl kubernetes apply lab.plan.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && len(paths) > 0:
				return errors.New("give either manifests with -f or one saved plan, not both")
			case len(args) == 1:
				return runApplySaved(cmd, s, args[0], f)
			case len(paths) == 0:
				return errors.New("no manifests: pass -f FILE|DIR, or a saved plan file")
			}
			req, docs, err := readClusterRequest(s, paths, prune)
			if err != nil {
				return err
			}
			return review(cmd, s, req, docs, f, "Apply this plan?")
		},
	}
	cmd.Flags().StringArrayVarP(&paths, "filename", "f", nil, "manifest file or directory (repeatable; a directory is read recursively; - reads standard input)")
	prune.bind(cmd, "also delete stored clusters that no manifest names")
	f.bind(cmd, true)
	return cmd
}

// review is the one plan-and-apply flow of every changing command: ask the
// controller for the plan of req, print it, stop when it is blocked or
// empty, ask (unless --yes), and apply exactly that plan's index and hash.
// docs are the manifests req was read from, if any, to say where an issue is.
func review(cmd *cobra.Command, s Streams, req apiv1.PlanRequest, docs []*manifest.Document, f applyFlags, question string) error {
	c, _, err := ctlClient(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	resp, err := c.Plan(cmdContext(cmd), req)
	if err != nil {
		return fmt.Errorf("compute plan: %w", err)
	}
	if resp.Forbidden != "" {
		return fmt.Errorf("%w: %w: %s (the same command with 'plan' instead shows what would change)", ErrForbiddenApply, client.ErrForbidden, resp.Forbidden)
	}
	if err := printPlan(s, req, locateIssues(docs, withoutManifestWarnings(resp))); err != nil {
		return err
	}
	return confirmAndApply(cmd, s, c, req, resp.Plan.Index, resp.Hash, resp, f, question)
}

// confirmAndApply stops on a blocked or empty plan, asks, applies and waits.
func confirmAndApply(cmd *cobra.Command, s Streams, c *client.Client, req apiv1.PlanRequest, index uint64, hash string, resp *apiv1.PlanResponse, f applyFlags, question string) error {
	if resp.Blocked() {
		return &ExitError{Code: 1}
	}
	if !resp.Changes() {
		return nil
	}
	if !f.yes {
		ok, err := askYes(s, question)
		if errors.Is(err, errNoTTY) {
			return ErrNoConfirmation
		}
		if err != nil {
			return err
		}
		if !ok {
			if _, err := fmt.Fprintln(s.Out, "Apply cancelled."); err != nil {
				return err
			}
			return &ExitError{Code: 1}
		}
	}
	out, err := c.Apply(cmdContext(cmd), req, index, hash)
	if client.IsStalePlan(err) {
		return ErrStalePlan
	}
	if issues, ok := client.BlockingIssues(err); ok {
		p := &plan.Plan{Blocking: issues}
		_ = plan.WriteText(s.Err, p, false)
		return fmt.Errorf("the controller found the plan blocked: %w", err)
	}
	if err != nil {
		return fmt.Errorf("apply plan: %w", err)
	}
	if err := printApplied(s, out); err != nil {
		return err
	}
	if !f.wait {
		return nil
	}
	return waitForClusters(cmd, s, c, out, f.timeout)
}

// runApplySaved applies a plan file written by kctl kubernetes plan --out.
func runApplySaved(cmd *cobra.Command, s Streams, path string, f applyFlags) error {
	sp, err := readSavedPlan(path)
	if err != nil {
		return err
	}
	resp := &apiv1.PlanResponse{Plan: sp.Plan, Hash: apiv1.CombinedHash(sp.Plan, nil, sp.Request)}
	if _, err := fmt.Fprintf(s.Out, "Saved plan %s, computed at controller index %d:\n\n", path, sp.Plan.Index); err != nil {
		return err
	}
	if err := printPlan(s, sp.Request, resp); err != nil {
		return err
	}
	c, _, err := ctlClient(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	return confirmAndApply(cmd, s, c, sp.Request, sp.Plan.Index, resp.Hash, resp, f, "Apply this plan?")
}

// withoutManifestWarnings returns resp with the plan's manifest warnings
// left out: kctl printed each of them already, with its file and line, when
// it read the manifests, and a warning is said once. The hash is untouched.
func withoutManifestWarnings(resp *apiv1.PlanResponse) *apiv1.PlanResponse {
	if resp.Plan == nil {
		return resp
	}
	p := *resp.Plan
	p.Warnings = nil
	for _, w := range resp.Plan.Warnings {
		if w.Code != plan.CodeManifestWarning {
			p.Warnings = append(p.Warnings, w)
		}
	}
	out := *resp
	out.Plan = &p
	return &out
}

// printPlan writes the plan: the clusters' plan as pkg/plan prints it, then
// the ClusterUpdates' part and the delete options, in colour on a terminal.
func printPlan(s Streams, req apiv1.PlanRequest, resp *apiv1.PlanResponse) error {
	color := isTTY(s.Out)
	if len(req.Updates)+len(req.DeleteUpdates) > 0 && len(resp.Plan.Clusters) == 0 {
		return printUpdatePlan(s, resp, color)
	}
	if err := plan.WriteText(s.Out, resp.Plan, color); err != nil {
		return err
	}
	var notes []string
	if req.Force {
		notes = append(notes, "--force: the teardown goes on where nodes do not answer.")
	}
	if req.PurgeVolumes {
		notes = append(notes, "--purge-volumes: the volumes kcore created are removed too; THEIR DATA IS LOST.")
	}
	for _, n := range notes {
		if _, err := fmt.Fprintln(s.Out, n); err != nil {
			return err
		}
	}
	return nil
}

// printApplied reports what the controller wrote.
func printApplied(s Streams, out apiv1.ApplyResponse) error {
	for _, name := range sortedKeys(out.Clusters) {
		if _, err := fmt.Fprintf(s.Out, "cluster %q: stored, phase %s\n", name, out.Clusters[name]); err != nil {
			return err
		}
	}
	for _, name := range out.Updates {
		if _, err := fmt.Fprintf(s.Out, "ClusterUpdate %q: stored\n", name); err != nil {
			return err
		}
	}
	for _, name := range out.DeletedUpdates {
		if _, err := fmt.Fprintf(s.Out, "ClusterUpdate %q: removed\n", name); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(s.Out, "Applied at controller index %d.\n", out.Index)
	return err
}

// readSavedPlan reads a plan file and checks its version and hash.
func readSavedPlan(path string) (*savedPlan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read saved plan: %w", err)
	}
	return decodeSavedPlan(data)
}
