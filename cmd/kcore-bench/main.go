// Command kcore-bench measures kcore against real references (make bench).
package main

import (
	"os"

	"kcore.dev/kcore/pkg/bench"
)

func main() {
	os.Exit(bench.Main(os.Args[1:], os.Stdout, os.Stderr))
}
