// Command kctl is kcore's command-line client.
package main

import (
	"fmt"
	"os"

	"kcore.dev/kcore/pkg/cli"
)

func main() {
	root := cli.NewKctl(cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(cli.ExitCode(err))
	}
}
