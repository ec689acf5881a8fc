package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/apiv1"
)

// newKubernetesKubeconfigCmd is `kctl kubernetes kubeconfig NAME`.
func newKubernetesKubeconfigCmd(s Streams) *cobra.Command {
	var ttl, out string
	var force bool
	cmd := &cobra.Command{
		Use:   "kubeconfig NAME [--out FILE|-] [--ttl 8h]",
		Short: "Write a kubeconfig for a cluster, with a short-lived certificate for you",
		Long: `Ask the controller for a kubeconfig of the cluster: its API endpoint (the VIP
when high availability is on), the cluster CA, and a client certificate signed
by the cluster CA for your own kcore identity — Kubernetes user
"kcore:<your name>" in group kcore:cluster-admins, which the cluster's RBAC
binds to cluster-admin. Only a kcore cluster-admin may ask; every issue is
audited, the key is never stored by the controller.

The certificate cannot be revoked before it expires, so it lives --ttl
(default 8h, at most 168h; ask again when it runs out). The file is written
with mode 0600 to --out (default kubeconfig-NAME in the current directory) and
is not overwritten without --force; --out - prints it to standard output.`,
		Example: `  kctl kubernetes kubeconfig lab
  KUBECONFIG=kubeconfig-lab kubectl get nodes
  kctl kubernetes kubeconfig lab --ttl 1h --out - > ~/.kube/lab`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if out == "" {
				out = "kubeconfig-" + name
			}
			if out != stdinPath && !force {
				if _, err := os.Stat(out); err == nil {
					return fmt.Errorf("%s exists: pass --force to replace it, or --out another file", out)
				} else if !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("check %s: %w", out, err)
				}
			}
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			resp, err := c.Kubeconfig(cmdContext(cmd), name, ttl)
			if err != nil {
				return fmt.Errorf("get kubeconfig of %s: %w", name, err)
			}
			return writeKubeconfig(s, out, resp)
		},
	}
	cmd.Flags().StringVar(&ttl, "ttl", "", fmt.Sprintf("certificate lifetime, %s to %s (default %s)", apiv1.MinKubeconfigTTL, apiv1.MaxKubeconfigTTL, apiv1.DefaultKubeconfigTTL))
	cmd.Flags().StringVar(&out, "out", "", "file to write, mode 0600 (default kubeconfig-NAME; - for standard output)")
	cmd.Flags().BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}

// writeKubeconfig writes the kubeconfig to out (0600, atomically) or to
// standard output, and says who it is for and until when on stderr.
func writeKubeconfig(s Streams, out string, resp apiv1.KubeconfigResponse) error {
	if out == stdinPath {
		if _, err := fmt.Fprint(s.Out, resp.Kubeconfig); err != nil {
			return err
		}
	} else {
		tmp := out + ".tmp"
		if err := os.WriteFile(tmp, []byte(resp.Kubeconfig), 0o600); err != nil {
			return fmt.Errorf("write kubeconfig: %w", err)
		}
		if err := os.Rename(tmp, out); err != nil {
			_ = os.Remove(tmp)
			return fmt.Errorf("write kubeconfig: %w", err)
		}
	}
	where := out
	if out == stdinPath {
		where = "standard output"
	}
	_, err := fmt.Fprintf(s.Err, "kubeconfig for %s (groups %v), valid until %s, written to %s\n", resp.User, resp.Groups, resp.Expires, where)
	return err
}
