// Command kcore-node-agent is kcore's node agent.
package main

import (
	"os"

	"kcore.dev/kcore/pkg/cli"
)

func main() {
	os.Exit(cli.Execute(cli.NewAgent(cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}), os.Stderr))
}
