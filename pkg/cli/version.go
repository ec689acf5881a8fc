package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/version"
)

func newVersionCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the kctl version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(s.Out, "kctl %s (schema %d, %s, %s/%s)\n", version.Version, version.Schema, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
