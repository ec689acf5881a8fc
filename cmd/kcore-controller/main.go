// Command kcore-controller is kcore's Raft-replicated controller.
package main

import (
	"os"

	"kcore.dev/kcore/pkg/cli"
)

func main() {
	os.Exit(cli.Execute(cli.NewController(cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}), os.Stderr))
}
