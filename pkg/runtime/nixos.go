package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// NixOSStatePath is the file the kcore NixOS module reads its units from.
const NixOSStatePath = "/etc/kcore/node-state.json"

// NixOSState is the content of NixOSStatePath.
type NixOSState struct {
	// BinDir is the agent's --bin-dir (bare argv[0]s are resolved there).
	BinDir string `json:"binDir,omitempty"`
	// Units are every unit of this node, sorted by name.
	Units []api.Unit `json:"units"`
}

// NixOS hands units to the kcore NixOS module: Ensure and Stop edit the set
// in memory, Flush writes it to <Root>/etc/kcore/node-state.json and runs
// nixos-rebuild switch whenever the file differs from the last successful
// switch (recorded in <Root>/var/lib/kcore/nixos-switched), so a failed
// rebuild is retried on the next apply.
type NixOS struct {
	root   string
	binDir string
	runner execrun.Runner
	log    *slog.Logger

	mu    sync.Mutex
	units map[string]api.Unit
}

// NewNixOS loads the current state file under root.
func NewNixOS(root, binDir string, r execrun.Runner, log *slog.Logger) (*NixOS, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &NixOS{root: root, binDir: binDir, runner: r, log: log, units: map[string]api.Unit{}}
	data, err := readBeneath(n.root, nixosStateRel)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("load nixos state: %w", err)
	}
	if len(data) > 0 {
		var st NixOSState
		if err := json.Unmarshal(data, &st); err != nil {
			return nil, fmt.Errorf("load nixos state: %w", err)
		}
		for _, u := range st.Units {
			n.units[u.Name] = u
		}
	}
	return n, nil
}

// nixosStateRel is NixOSStatePath beneath the root.
const nixosStateRel = "etc/kcore/node-state.json"

// Ensure implements Runtime; the change takes effect at Flush.
func (n *NixOS) Ensure(_ context.Context, u api.Unit) (bool, error) {
	if err := validate(u); err != nil {
		return false, fmt.Errorf("ensure unit %q: %w", u.Name, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	old, ok := n.units[u.Name]
	n.units[u.Name] = u
	return !ok || old.InputHash != u.InputHash, nil
}

// Reload implements Runtime: nothing here, since the module gives a unit
// with a reloadHash reloadTriggers and an ExecReload that sends SIGHUP, so
// the switch at Flush reloads it exactly when its reloadHash changed.
func (n *NixOS) Reload(_ context.Context, name string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.units[name]; !ok {
		return fmt.Errorf("reload unit %s: %w", name, ErrUnknownUnit)
	}
	return nil
}

// Stop implements Runtime; the unit disappears at Flush.
func (n *NixOS) Stop(_ context.Context, name string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.units, name)
	return nil
}

// Content renders the state file.
func (n *NixOS) Content() ([]byte, error) {
	n.mu.Lock()
	st := NixOSState{BinDir: n.binDir, Units: make([]api.Unit, 0, len(n.units))}
	for _, u := range n.units {
		st.Units = append(st.Units, u)
	}
	n.mu.Unlock()
	sort.Slice(st.Units, func(i, j int) bool { return st.Units[i].Name < st.Units[j].Name })
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("render nixos state: %w", err)
	}
	return append(data, '\n'), nil
}

// Flush implements Flusher.
func (n *NixOS) Flush(ctx context.Context) error {
	data, err := n.Content()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	if cur, err := readBeneath(n.root, nixosStateRel); err != nil || string(cur) != string(data) {
		if err := writeBeneath(n.root, nixosStateRel, data, 0o644); err != nil {
			return fmt.Errorf("flush nixos state: %w", err)
		}
	}
	if done, err := readBeneath(n.root, nixosSwitchedRel); err == nil && strings.TrimSpace(string(done)) == want {
		return nil
	}
	if _, err := n.runner.Run(ctx, []string{"nixos-rebuild", "switch"}, execrun.WithTimeout(30*time.Minute)); err != nil {
		return fmt.Errorf("flush nixos state: %w", err)
	}
	if err := writeBeneath(n.root, nixosSwitchedRel, []byte(want+"\n"), 0o644); err != nil {
		return fmt.Errorf("flush nixos state: %w", err)
	}
	n.log.Info("nixos-rebuild switch done", "state", want)
	return nil
}

// Status implements Runtime with systemctl show (the module makes each unit a systemd service).
func (n *NixOS) Status(ctx context.Context, name string) (UnitStatus, error) {
	n.mu.Lock()
	u, ok := n.units[name]
	n.mu.Unlock()
	if !ok {
		return UnitStatus{}, fmt.Errorf("status of %s: %w", name, ErrUnknownUnit)
	}
	return systemctlShow(ctx, n.runner, name, u.InputHash, u.Oneshot)
}

// List implements Runtime.
func (n *NixOS) List(context.Context) ([]string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	names := make([]string, 0, len(n.units))
	for name := range n.units {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}
