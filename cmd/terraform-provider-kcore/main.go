// Command terraform-provider-kcore is kcore's Terraform / OpenTofu
// provider (pkg/tfprovider), run by terraform or tofu as a plugin.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"kcore.dev/kcore/pkg/tfprovider"
	"kcore.dev/kcore/pkg/version"
)

// address is the provider's source address in configurations.
const address = "registry.terraform.io/kcore/kcore"

func main() {
	debug := flag.Bool("debug", false, "run in debug mode: print the reattach configuration and wait (for debuggers)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	err := providerserver.Serve(context.Background(), tfprovider.New(version.Version, log), providerserver.ServeOpts{Address: address, Debug: *debug})
	if err != nil {
		fmt.Fprintln(os.Stderr, "terraform-provider-kcore:", err)
		os.Exit(1)
	}
}
