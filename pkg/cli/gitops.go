package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

// newGitOpsCmd is `kctl gitops`: git sources the controller follows.
func newGitOpsCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gitops",
		Short: "Make the controller follow a git branch of manifests",
		Long: `A GitSource is a git branch and directory the controller follows: the
raft leader fetches it every interval (and at once on 'kctl gitops sync'),
plans each new commit exactly as 'kctl kubernetes apply' would, and applies the
plan when nothing blocks it and its disruption is within the source's policy;
otherwise it holds the plan for 'kctl gitops approve'. See docs/gitops.md.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newGitOpsAddCmd(s), newGitOpsSyncCmd(s), newGitOpsApproveCmd(s), newGitOpsStatusCmd(s), newGitOpsRemoveCmd(s))
	return cmd
}

func newGitOpsAddCmd(s Streams) *cobra.Command {
	var spec api.GitSourceSpec
	cmd := &cobra.Command{
		Use:   "add NAME --repo URL --branch B [--path P]",
		Short: "Follow a git branch's manifests, or change how a source is followed",
		Long: `Store a GitSource: the leader follows --branch of --repo and applies the
KubernetesCluster and ClusterUpdate manifests (YAML and HCL) below --path.
--repo is an absolute path to a local repository (read in place) or an
https://, http://, ssh://, git:// or file:// URL (fetched into the leader's
cache, bounded in time and size). Adding a source that exists replaces its
settings. Needs the cluster-admin role.

--policy auto applies a commit's plan when its most disruptive step is at
most --max-disruption (none, restart-unit, cert-reissue, volume-grow, vip-move,
drain, etcd-membership, delete: deleting a cluster is delete); --policy approve
holds every plan with changes for 'kctl gitops approve'.

Prune is scoped to the source: a commit deletes only clusters this source
created that it no longer declares; a commit that declares nothing deletes
nothing unless --allow-empty.`,
		Example: `  kctl gitops add fleet --repo https://git.example.com/fleet.git --branch main --path clusters
  kctl gitops add fleet --repo /srv/git/fleet --branch main --policy approve`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			if _, err := c.PutGitSource(cmdContext(cmd), args[0], spec); err != nil {
				return fmt.Errorf("add git source %s: %w", args[0], err)
			}
			_, err = fmt.Fprintf(s.Out, "git source %s stored: the leader follows %s branch %s\n", args[0], spec.Repo, spec.Branch)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Repo, "repo", "", "repository: an absolute path or a URL (required)")
	f.StringVar(&spec.Branch, "branch", "", "branch to follow (required)")
	f.StringVar(&spec.Path, "path", "", "directory of manifests in the repository (default: its root)")
	f.StringVar(&spec.Interval, "interval", api.DefaultGitInterval, "how often the leader fetches (10s to 24h)")
	f.StringVar(&spec.Policy, "policy", api.GitPolicyAuto, "auto or approve")
	f.StringVar(&spec.MaxDisruption, "max-disruption", "none", "most disruptive step auto applies: "+strings.Join(api.GitDisruptions(), ", "))
	f.BoolVar(&spec.AllowEmpty, "allow-empty", false, "let a commit that declares nothing prune every cluster the source created")
	_ = cmd.MarkFlagRequired("repo")
	_ = cmd.MarkFlagRequired("branch")
	return cmd
}

func newGitOpsSyncCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:     "sync NAME",
		Short:   "Fetch a git source now and plan its commit again",
		Long:    `Ask the leader to fetch the source now, and plan its head commit again even when it was planned before (a blocked plan is retried). Needs the operator role.`,
		Example: `  kctl gitops sync fleet`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			if _, err := c.SyncGitSource(cmdContext(cmd), args[0]); err != nil {
				return fmt.Errorf("sync git source %s: %w", args[0], err)
			}
			_, err = fmt.Fprintf(s.Out, "sync of %s requested: see 'kctl gitops status %s'\n", args[0], args[0])
			return err
		},
	}
}

func newGitOpsApproveCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "approve NAME COMMIT",
		Short: "Apply the plan a git source holds for a commit",
		Long: `Approve the pending plan of COMMIT (its id, or a prefix of at least 7
characters): the leader applies it if it is still the plan shown by 'kctl
gitops status'; if what it would do changed, it is held again for a new
approval. A blocked plan cannot be approved. Needs the cluster-admin role.`,
		Example: `  kctl gitops status fleet
  kctl gitops approve fleet 3c4ad1b`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			if _, err := c.ApproveGitCommit(cmdContext(cmd), args[0], args[1]); err != nil {
				return fmt.Errorf("approve commit %s of %s: %w", args[1], args[0], err)
			}
			_, err = fmt.Fprintf(s.Out, "commit %s of %s approved\n", args[1], args[0])
			return err
		},
	}
}

func newGitOpsRemoveCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:     "remove NAME",
		Short:   "Stop following a git source; the clusters it created stay",
		Long:    `Delete the GitSource. Nothing it created is deleted: the objects keep their annotations, so adding the source again owns them again. Needs the cluster-admin role.`,
		Example: `  kctl gitops remove fleet`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			if _, err := c.DeleteGitSource(cmdContext(cmd), args[0]); err != nil {
				return fmt.Errorf("remove git source %s: %w", args[0], err)
			}
			_, err = fmt.Fprintf(s.Out, "git source %s removed\n", args[0])
			return err
		},
	}
}

func newGitOpsStatusCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show what git sources synced, what waits for approval, errors and drift",
		Long: `Print each git source (or the one named): the commit last applied, the
commit last fetched, the plan pending approval or blocked, the last error, and
drift: clusters and updates the source owns whose stored spec is no longer the
one it wrote (changed outside git). Needs the viewer role.`,
		Example: `  kctl gitops status
  kctl gitops status fleet -o yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			var views []apiv1.GitSourceView
			if len(args) == 1 {
				v, err := c.GitSource(cmdContext(cmd), args[0])
				if err != nil {
					return fmt.Errorf("read git source %s: %w", args[0], err)
				}
				views = append(views, v)
			} else if views, err = c.GitSources(cmdContext(cmd)); err != nil {
				return fmt.Errorf("list git sources: %w", err)
			}
			var structured any = views
			if len(args) == 1 {
				structured = views[0]
			}
			if done, err := printStructured(s, structured, output); done {
				return err
			}
			for _, v := range views {
				if err := printGitStatus(s.Out, v); err != nil {
					return err
				}
			}
			return nil
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// printGitStatus prints one source for people.
func printGitStatus(w io.Writer, v apiv1.GitSourceView) error {
	g, st := v.Source, v.Source.Status
	orNone := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	lines := []string{
		fmt.Sprintf("%s: %s branch %s path %q (%s, max disruption %s, every %s)", g.Metadata.Name, g.Spec.Repo, g.Spec.Branch, g.Spec.Path, g.Spec.Policy, g.Spec.MaxDisruption, g.Spec.Interval),
		fmt.Sprintf("  synced:  %s %s", orNone(st.Commit), st.SyncedAt),
		fmt.Sprintf("  fetched: %s %s", orNone(st.Fetched), st.FetchedAt),
	}
	if p := st.Pending; p != nil {
		lines = append(lines, fmt.Sprintf("  pending: %s (%s, disruption %s)", p.Commit, p.Reason, p.Disruption))
		for _, s := range p.Summary {
			lines = append(lines, "    "+s)
		}
		for _, b := range p.Blocking {
			lines = append(lines, "    blocked: "+b)
		}
	}
	if st.LastError != "" {
		lines = append(lines, "  error:   "+st.LastError)
	}
	for _, c := range st.Conditions {
		lines = append(lines, fmt.Sprintf("  %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	for _, d := range v.Drift {
		lines = append(lines, fmt.Sprintf("  drift:   %s/%s %s outside git", d.Kind, d.Name, d.Reason))
	}
	_, err := fmt.Fprintln(w, strings.Join(lines, "\n"))
	return err
}
