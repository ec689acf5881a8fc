package execrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// DefaultTimeout bounds a call that sets no timeout of its own.
const DefaultTimeout = 5 * time.Minute

// ErrEmptyArgv is returned for a call without a command.
var ErrEmptyArgv = errors.New("empty argv")

// ErrNotFound is returned (wrapped) when the command's binary does not exist.
var ErrNotFound = errors.New("command not found")

// ErrTimeout is returned (wrapped) when a call ran past its timeout.
var ErrTimeout = errors.New("command timed out")

// Result is what a command printed and how it exited.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// Runner runs one command given as an argv.
type Runner interface {
	// Run runs argv to completion. A non-zero exit is returned as an
	// *ExitError (with the Result filled in as well); a missing binary wraps
	// ErrNotFound; a timeout wraps ErrTimeout.
	Run(ctx context.Context, argv []string, opts ...Option) (Result, error)
}

// Options are a call's settings; build them with Option functions.
type Options struct {
	// Timeout bounds the call; zero means DefaultTimeout.
	Timeout time.Duration
	// Env replaces the environment when non-nil (KEY=VALUE entries).
	Env []string
	// ExtraEnv is appended to the environment.
	ExtraEnv []string
	// Dir is the working directory; empty means the caller's.
	Dir string
	// Stdin is fed to the command.
	Stdin []byte
}

// Option sets one call setting.
type Option func(*Options)

// WithTimeout bounds the call.
func WithTimeout(d time.Duration) Option { return func(o *Options) { o.Timeout = d } }

// WithEnv replaces the command's environment with exactly env.
func WithEnv(env ...string) Option { return func(o *Options) { o.Env = append([]string{}, env...) } }

// WithExtraEnv adds entries to the inherited (or replaced) environment.
func WithExtraEnv(env ...string) Option {
	return func(o *Options) { o.ExtraEnv = append(o.ExtraEnv, env...) }
}

// WithDir sets the working directory.
func WithDir(dir string) Option { return func(o *Options) { o.Dir = dir } }

// WithStdin feeds data to the command's standard input.
func WithStdin(data []byte) Option { return func(o *Options) { o.Stdin = data } }

// Apply folds opts into one Options value (for Runner implementations).
func Apply(opts []Option) Options {
	var o Options
	for _, fn := range opts {
		fn(&o)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// ExitError is a command that ran and exited non-zero (or was killed by a signal, ExitCode -1).
type ExitError struct {
	Argv   []string
	Result Result
}

func (e *ExitError) Error() string {
	msg := strings.TrimSpace(string(e.Result.Stderr))
	if len(msg) > 512 {
		msg = msg[len(msg)-512:]
	}
	if msg == "" {
		return fmt.Sprintf("run %s: exit status %d", Join(e.Argv), e.Result.ExitCode)
	}
	return fmt.Sprintf("run %s: exit status %d: %s", Join(e.Argv), e.Result.ExitCode, msg)
}

// ExitCode returns the exit code carried by err when it is an *ExitError, and -1 otherwise.
func ExitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Result.ExitCode
	}
	return -1
}

// Join renders an argv as one line for logs and test expectations (no quoting: not for a shell).
func Join(argv []string) string { return strings.Join(argv, " ") }
