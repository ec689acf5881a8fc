package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

const (
	showKeepalived = "systemctl show --property=ActiveState,SubState,MainPID,NRestarts,ExecMainStatus kcore-keepalived.service"
	hupKeepalived  = "systemctl kill --kill-whom=main --signal=SIGHUP kcore-keepalived.service"
)

// Systemd reloads an active service with SIGHUP to its main process, leaves
// an inactive one alone, and refuses a unit it does not manage.
func TestSystemdReload(t *testing.T) {
	ctx := context.Background()
	if err := (&Systemd{Root: t.TempDir(), Runner: execrun.NewRecorder()}).Reload(ctx, "kcore-keepalived"); !errors.Is(err, ErrUnknownUnit) {
		t.Fatalf("reload of an unknown unit: %v, want ErrUnknownUnit", err)
	}
	for _, tt := range []struct {
		state string
		want  []string
	}{
		{"active", []string{showKeepalived, hupKeepalived}},
		{"failed", []string{showKeepalived}},
	} {
		t.Run(tt.state, func(t *testing.T) {
			rec := execrun.NewRecorder().OnStdout(showKeepalived, "ActiveState="+tt.state+"\nSubState=running\nMainPID=42\n")
			s := &Systemd{Root: t.TempDir(), Runner: rec}
			u := api.Unit{Name: "kcore-keepalived", Argv: []string{"keepalived"}, InputHash: "i", ReloadHash: "r"}
			if _, err := s.Ensure(ctx, u); err != nil {
				t.Fatal(err)
			}
			before := len(rec.Calls())
			if err := s.Reload(ctx, u.Name); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range rec.Calls()[before:] {
				got = append(got, strings.Join(c, " "))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("reload ran %v, want %v", got, tt.want)
			}
		})
	}
}

// The supervisor refuses to reload a unit it does not run (the agent's
// TestSupervisedUnitReloadsInPlace reloads a running one).
func TestSupervisorReloadUnknown(t *testing.T) {
	s, err := NewSupervisor(SupervisorConfig{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Reload(context.Background(), "kcore-keepalived"); !errors.Is(err, ErrUnknownUnit) {
		t.Fatalf("reload of an unknown unit: %v, want ErrUnknownUnit", err)
	}
}
