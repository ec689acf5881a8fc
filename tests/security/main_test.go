package security

import (
	"os"
	"testing"

	"kcore.dev/kcore/tests/proccluster"
)

// TestMain removes the kcore-controller the process tests built.
func TestMain(m *testing.M) { os.Exit(proccluster.Main(m)) }
