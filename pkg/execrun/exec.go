package execrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Exec runs commands for real with os/exec: no shell, its own process group
// (killed whole on timeout), output captured.
type Exec struct {
	// Path lists directories searched first for a bare argv[0] (e.g. the agent's --bin-dir).
	Path []string
}

// Run implements Runner.
func (e Exec) Run(ctx context.Context, argv []string, opts ...Option) (Result, error) {
	if len(argv) == 0 {
		return Result{}, ErrEmptyArgv
	}
	o := Apply(opts)
	bin, err := e.lookPath(argv[0])
	if err != nil {
		return Result{ExitCode: -1}, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = o.Dir
	if o.Env != nil || len(o.ExtraEnv) > 0 {
		env := o.Env
		if env == nil {
			env = os.Environ()
		}
		cmd.Env = append(append([]string{}, env...), o.ExtraEnv...)
	}
	if o.Stdin != nil {
		cmd.Stdin = bytes.NewReader(o.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	runErr := cmd.Run()
	res := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: 0}
	if runErr == nil {
		return res, nil
	}
	res.ExitCode = -1
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		res.ExitCode = ee.ExitCode()
	}
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return res, fmt.Errorf("run %s: %w after %s", Join(argv), ErrTimeout, o.Timeout)
	}
	if ee != nil {
		return res, &ExitError{Argv: append([]string{}, argv...), Result: res}
	}
	return res, fmt.Errorf("run %s: %w", Join(argv), runErr)
}

// LookPath resolves argv[0] the way Run does: an absolute or relative path is
// used as is, a bare name is searched in e.Path, then in $PATH.
func (e Exec) LookPath(name string) (string, error) { return e.lookPath(name) }

func (e Exec) lookPath(name string) (string, error) {
	return LookPath(name, e.Path)
}

// LookPath finds a bare binary name in dirs, then in $PATH; a name with a
// slash is returned unchanged when it exists. A miss wraps ErrNotFound.
func LookPath(name string, dirs []string) (string, error) {
	if name == "" {
		return "", ErrEmptyArgv
	}
	if bytes.ContainsRune([]byte(name), '/') {
		if _, err := os.Stat(name); err != nil {
			return "", fmt.Errorf("look up %s: %w", name, ErrNotFound)
		}
		return name, nil
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := d + "/" + name
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("look up %s: %w", name, ErrNotFound)
	}
	return p, nil
}
