// Command kctl is kcore's command-line client.
package main

import (
	"os"

	"kcore.dev/kcore/pkg/cli"
)

func main() {
	os.Exit(cli.Execute(cli.NewKctl(cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}), os.Stderr))
}
