package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/schema"
)

// newSchemasCmd is the hidden generator behind `make schemas`: it writes one
// JSON Schema per kind, reading field descriptions from pkg/api's source.
func newSchemasCmd(s Streams) *cobra.Command {
	var out, apiDir string
	cmd := &cobra.Command{
		Use:    "schemas --out DIR",
		Short:  "Regenerate the JSON Schemas from pkg/api (run from the repository by make schemas)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			files, err := schema.Generate(apiDir)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("write schemas: %w", err)
			}
			for _, f := range files {
				p := filepath.Join(out, f.Name)
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					return fmt.Errorf("write schemas: %w", err)
				}
				if _, err := fmt.Fprintln(s.Out, "wrote", p); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "schemas", "directory to write the schema files to")
	cmd.Flags().StringVar(&apiDir, "api-dir", filepath.Join("pkg", "api"), "source directory of pkg/api, for the field descriptions")
	return cmd
}
