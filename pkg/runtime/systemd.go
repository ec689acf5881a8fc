package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// Systemd runs units as systemd services: it writes
// <Root>/etc/systemd/system/<unit>.service and drives systemctl through the
// runner. The units it manages are the unit files carrying HashMarker.
type Systemd struct {
	// Root is the host root the unit directory is under.
	Root string
	// BinDir makes bare argv[0]s absolute.
	BinDir string
	// ReleasesDir makes a pinned unit's bare argv[0] absolute under
	// <ReleasesDir>/<Version> (see UnitBinDir), so a new pin is a new unit file.
	ReleasesDir string
	// Runner runs systemctl.
	Runner execrun.Runner
	// Log receives events.
	Log *slog.Logger
}

// unitRel is the unit's file beneath the root.
func unitRel(name string) string { return unitDirRel + "/" + name + ".service" }

func (s *Systemd) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

func (s *Systemd) systemctl(ctx context.Context, args ...string) (execrun.Result, error) {
	return s.Runner.Run(ctx, append([]string{"systemctl"}, args...), execrun.WithTimeout(2*time.Minute))
}

// Ensure implements Runtime: it writes the unit file when it differs, then
// daemon-reload and either enable --now (new unit) or restart (changed hash).
func (s *Systemd) Ensure(ctx context.Context, u api.Unit) (bool, error) {
	if err := validate(u); err != nil {
		return false, fmt.Errorf("ensure unit %q: %w", u.Name, err)
	}
	want := SystemdUnitFile(u, UnitBinDir(u, s.BinDir, s.ReleasesDir))
	rel := unitRel(u.Name)
	old, err := readBeneath(s.Root, rel)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("ensure unit %s: %w", u.Name, err)
	}
	if exists && string(old) == want {
		return false, nil
	}
	if err := writeBeneath(s.Root, rel, []byte(want), 0o644); err != nil {
		return false, fmt.Errorf("ensure unit %s: %w", u.Name, err)
	}
	svc := u.Name + ".service"
	steps := [][]string{{"daemon-reload"}}
	switch {
	case !exists:
		steps = append(steps, []string{"enable", "--now", svc})
	case unitHash(string(old)) != u.InputHash:
		steps = append(steps, []string{"enable", svc}, []string{"restart", svc})
	}
	for _, args := range steps {
		if _, err := s.systemctl(ctx, args...); err != nil {
			// Put the old file back (or none), so the next Ensure sees the
			// difference and runs the steps again.
			if exists {
				writeBeneath(s.Root, rel, old, 0o644)
			} else {
				removeBeneath(s.Root, rel)
			}
			return false, fmt.Errorf("ensure unit %s: %w", u.Name, err)
		}
	}
	s.log().Info("ensured unit", "unit", u.Name, "inputHash", u.InputHash, "new", !exists)
	return exists && unitHash(string(old)) != u.InputHash || !exists, nil
}

// Reload implements Runtime with systemctl kill: SIGHUP to the service's
// main process, nothing when the service is not active.
func (s *Systemd) Reload(ctx context.Context, name string) error {
	if _, err := readBeneath(s.Root, unitRel(name)); err != nil {
		return fmt.Errorf("reload unit %s: %w", name, ErrUnknownUnit)
	}
	return reloadService(ctx, s.Runner, name)
}

// reloadService sends SIGHUP to a systemd service's main process when it is
// active.
func reloadService(ctx context.Context, r execrun.Runner, name string) error {
	st, err := systemctlShow(ctx, r, name, "", false)
	if err != nil {
		return fmt.Errorf("reload unit %s: %w", name, err)
	}
	if st.State != StateRunning {
		return nil
	}
	if _, err := r.Run(ctx, []string{"systemctl", "kill", "--kill-whom=main", "--signal=SIGHUP", name + ".service"}, execrun.WithTimeout(30*time.Second)); err != nil {
		return fmt.Errorf("reload unit %s: %w", name, err)
	}
	return nil
}

// Stop implements Runtime: stop, disable, remove the unit file, daemon-reload.
func (s *Systemd) Stop(ctx context.Context, name string) error {
	rel := unitRel(name)
	if _, err := readBeneath(s.Root, rel); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	svc := name + ".service"
	for _, args := range [][]string{{"stop", svc}, {"disable", svc}} {
		if _, err := s.systemctl(ctx, args...); err != nil {
			return fmt.Errorf("stop unit %s: %w", name, err)
		}
	}
	if err := removeBeneath(s.Root, rel); err != nil {
		return fmt.Errorf("stop unit %s: %w", name, err)
	}
	if _, err := s.systemctl(ctx, "daemon-reload"); err != nil {
		return fmt.Errorf("stop unit %s: %w", name, err)
	}
	return nil
}

// Status implements Runtime with systemctl show.
func (s *Systemd) Status(ctx context.Context, name string) (UnitStatus, error) {
	content, err := readBeneath(s.Root, unitRel(name))
	if err != nil {
		return UnitStatus{}, fmt.Errorf("status of %s: %w", name, ErrUnknownUnit)
	}
	return systemctlShow(ctx, s.Runner, name, unitHash(string(content)), strings.Contains(string(content), "Type=oneshot"))
}

// systemctlShow asks systemd for a unit's state.
func systemctlShow(ctx context.Context, r execrun.Runner, name, hash string, oneshot bool) (UnitStatus, error) {
	res, err := r.Run(ctx, []string{"systemctl", "show", "--property=ActiveState,SubState,MainPID,NRestarts,ExecMainStatus", name + ".service"},
		execrun.WithTimeout(30*time.Second))
	if err != nil {
		return UnitStatus{}, fmt.Errorf("status of %s: %w", name, err)
	}
	return parseSystemctlShow(name, hash, oneshot, string(res.Stdout)), nil
}

// parseSystemctlShow maps systemctl show's key=value lines to a UnitStatus.
func parseSystemctlShow(name, hash string, oneshot bool, out string) UnitStatus {
	kv := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			kv[k] = v
		}
	}
	st := UnitStatus{Name: name, InputHash: hash, Oneshot: oneshot}
	st.PID, _ = strconv.Atoi(kv["MainPID"])
	st.Restarts, _ = strconv.Atoi(kv["NRestarts"])
	st.ExitCode, _ = strconv.Atoi(kv["ExecMainStatus"])
	switch kv["ActiveState"] {
	case "active", "reloading":
		st.State = StateRunning
		if oneshot || kv["SubState"] == "exited" {
			st.State = StateExited
		}
	case "activating", "deactivating":
		st.State = StateStarting
	case "failed":
		st.State = StateFailed
	default:
		st.State = StateStopped
		if st.ExitCode != 0 {
			st.State = StateFailed
		}
	}
	return st
}

// List implements Runtime: every unit file carrying HashMarker.
func (s *Systemd) List(context.Context) ([]string, error) {
	entries, err := readDirBeneath(s.Root, unitDirRel)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list units: %w", err)
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".service")
		if !ok || e.IsDir() {
			continue
		}
		data, err := readBeneath(s.Root, unitDirRel+"/"+e.Name())
		if err == nil && strings.Contains(string(data), HashMarker) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}
