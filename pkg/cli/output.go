package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// Output formats of -o on read commands.
const (
	outputTable = "table"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// addOutputFlag adds -o/--output (table, json or yaml) to a read command.
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", outputTable, "output format: table, json or yaml")
}

// checkOutput refuses an -o value no read command knows, before anything is
// asked of the controller.
func checkOutput(output string) error {
	switch output {
	case outputTable, outputJSON, outputYAML:
		return nil
	}
	return fmt.Errorf("-o %q: want table, json or yaml", output)
}

// printStructured prints v as JSON or YAML when output asks for one and
// reports whether it did; for table output the caller prints its table.
// YAML is JSON re-encoded, so both carry the same field names.
func printStructured(s Streams, v any, output string) (bool, error) {
	switch output {
	case outputJSON:
		return true, printJSON(s, v)
	case outputYAML:
		return true, printYAML(s, v)
	}
	return false, nil
}

func printJSON(s Streams, v any) error {
	enc := json.NewEncoder(s.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printYAML prints v as YAML with the JSON field names.
func printYAML(s Streams, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	out, err := yaml.Marshal(generic)
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	_, err = s.Out.Write(out)
	return err
}
