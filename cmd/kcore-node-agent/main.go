// Command kcore-node-agent is kcore's node agent.
package main

import (
	"context"
	"log/slog"
	"os"

	"kcore.dev/kcore/pkg/cli"
	"kcore.dev/kcore/pkg/cridrain"
)

func main() {
	drain := func(ctx context.Context, log *slog.Logger, endpoint string) error {
		return cridrain.Drain(ctx, endpoint, cridrain.Options{Log: log})
	}
	os.Exit(cli.Execute(cli.NewAgent(cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, cli.WithPodDrain(drain)), os.Stderr))
}
