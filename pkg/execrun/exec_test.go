package execrun

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestExecRun(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		argv     []string
		opts     []Option
		stdout   string
		exitCode int
		wantErr  error
		exitErr  bool
	}{
		{name: "stdout captured", argv: []string{"echo", "a", "b c"}, stdout: "a b c\n"},
		{name: "stdin fed", argv: []string{"cat"}, opts: []Option{WithStdin([]byte("in"))}, stdout: "in"},
		{name: "env replaced", argv: []string{"env"}, opts: []Option{WithEnv("A=1")}, stdout: "A=1\n"},
		{name: "env extended", argv: []string{"env"}, opts: []Option{WithEnv("A=1"), WithExtraEnv("B=2")}, stdout: "A=1\nB=2\n"},
		{name: "exit code", argv: []string{"false"}, exitCode: 1, exitErr: true},
		{name: "missing binary", argv: []string{"kcore-no-such-binary"}, exitCode: -1, wantErr: ErrNotFound},
		{name: "timeout kills", argv: []string{"sleep", "30"}, opts: []Option{WithTimeout(50 * time.Millisecond)}, exitCode: -1, wantErr: ErrTimeout},
		{name: "no shell interpretation", argv: []string{"echo", "$HOME;", "`id`"}, stdout: "$HOME; `id`\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Exec{}.Run(ctx, tt.argv, tt.opts...)
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
			case tt.exitErr:
				var ee *ExitError
				if !errors.As(err, &ee) {
					t.Fatalf("err = %v, want *ExitError", err)
				}
			case err != nil:
				t.Fatalf("run: %v", err)
			}
			if res.ExitCode != tt.exitCode {
				t.Errorf("exit code = %d, want %d", res.ExitCode, tt.exitCode)
			}
			if string(res.Stdout) != tt.stdout {
				t.Errorf("stdout = %q, want %q", res.Stdout, tt.stdout)
			}
		})
	}
}

func TestExecSearchesPathDirsFirst(t *testing.T) {
	if _, err := (Exec{}).Run(context.Background(), nil); !errors.Is(err, ErrEmptyArgv) {
		t.Fatalf("empty argv: %v", err)
	}
	p, err := Exec{Path: []string{"/nonexistent", "/usr/bin"}}.LookPath("env")
	if err != nil || p != "/usr/bin/env" {
		t.Fatalf("LookPath = %q, %v", p, err)
	}
}

func TestRecorder(t *testing.T) {
	r := NewRecorder().
		OnStdout("lvs --reportformat json", "first").
		OnStdout("lvs --reportformat json", "second").
		OnExit("blkid /dev/x", 2, "").
		Missing("zfs")
	ctx := context.Background()
	var outs []string
	for range 3 {
		res, err := r.Run(ctx, []string{"lvs", "--reportformat", "json"})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(res.Stdout))
	}
	if strings.Join(outs, ",") != "first,second,second" {
		t.Fatalf("queued responses = %v", outs)
	}
	if _, err := r.Run(ctx, []string{"blkid", "/dev/x"}); ExitCode(err) != 2 {
		t.Fatalf("blkid exit = %d (%v)", ExitCode(err), err)
	}
	if _, err := r.Run(ctx, []string{"zfs", "list"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing zfs: %v", err)
	}
	if res, err := r.Run(ctx, []string{"unscripted"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("unscripted = %+v, %v", res, err)
	}
	want := []string{"lvs --reportformat json", "lvs --reportformat json", "lvs --reportformat json", "blkid /dev/x", "zfs list", "unscripted"}
	if got := r.Commands(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("commands = %q", got)
	}
}
