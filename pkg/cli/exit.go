package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// ExitError carries a process exit code other than 1, e.g. 2 for "changes
// present" with --detailed-exitcode. An ExitError with a nil Err prints nothing.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

// Execute runs a root command and returns the process exit code, printing the
// error (if it has a message) to stderr. Every main calls it.
func Execute(root *cobra.Command, stderr io.Writer) int {
	err := root.Execute()
	if err == nil {
		return 0
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(stderr, "error:", msg)
	}
	return ExitCode(err)
}
