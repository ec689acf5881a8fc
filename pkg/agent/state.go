package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// StatePath is where the agent keeps its progress, under the root (in AgentDir).
const StatePath = AgentDir + "/" + stateFile

// stateFile is StatePath's name in AgentDir.
const stateFile = "agent-state.json"

// MaxStateFileBytes caps the state file the agent reads back.
const MaxStateFileBytes = 16 << 20

// State is what the agent has done, per cluster: it survives restarts so
// finished work is not redone.
type State struct {
	Clusters map[string]*ClusterState `json:"clusters"`
}

// ClusterState is one cluster's applied items.
type ClusterState struct {
	// Generation is the last NodeState generation applied.
	Generation int64 `json:"generation"`
	// Files maps each host path kcore wrote to the SHA-256 of its content and its mode.
	Files map[string]FileRecord `json:"files,omitempty"`
	// Units maps each unit kcore ensured to its InputHash.
	Units map[string]string `json:"units,omitempty"`
	// Reloads maps each unit with a ReloadHash to the ReloadHash its
	// process last read (started with, or reloaded to).
	Reloads map[string]string `json:"reloads,omitempty"`
	// CRI maps each unit kcore ensured that serves a CRI to its endpoint,
	// so its pods are drained before it is removed, when the NodeState
	// that rendered it is gone.
	CRI map[string]string `json:"cri,omitempty"`
	// Tasks maps each task to the InputHash of its last successful run.
	Tasks map[string]string `json:"tasks,omitempty"`
	// Volumes maps each volume ensured to its size.
	Volumes map[string]int64 `json:"volumes,omitempty"`
	// Purged lists the volumes this agent unmounted and deleted, so a
	// re-applied purge reports them done instead of refusing them.
	Purged map[string]bool `json:"purged,omitempty"`
}

// FileRecord is one written file.
type FileRecord struct {
	SHA256 string `json:"sha256"`
	Mode   uint32 `json:"mode"`
}

func (s *State) cluster(name string) *ClusterState {
	if s.Clusters == nil {
		s.Clusters = map[string]*ClusterState{}
	}
	cs := s.Clusters[name]
	if cs == nil {
		cs = &ClusterState{}
		s.Clusters[name] = cs
	}
	if cs.Files == nil {
		cs.Files = map[string]FileRecord{}
	}
	if cs.Units == nil {
		cs.Units = map[string]string{}
	}
	if cs.Reloads == nil {
		cs.Reloads = map[string]string{}
	}
	if cs.Tasks == nil {
		cs.Tasks = map[string]string{}
	}
	if cs.CRI == nil {
		cs.CRI = map[string]string{}
	}
	if cs.Volumes == nil {
		cs.Volumes = map[string]int64{}
	}
	if cs.Purged == nil {
		cs.Purged = map[string]bool{}
	}
	return cs
}

// LoadState reads the state file under root (empty when absent).
func LoadState(root string) (*State, error) {
	st := &State{Clusters: map[string]*ClusterState{}}
	dir, err := OpenAgentDir(root)
	if err != nil {
		return nil, fmt.Errorf("load agent state: %w", err)
	}
	defer dir.Close()
	data, err := dir.ReadFile(stateFile, MaxStateFileBytes)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load agent state: %w", err)
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("load agent state: %w", err)
	}
	if st.Clusters == nil {
		st.Clusters = map[string]*ClusterState{}
	}
	return st, nil
}

// save writes the state file atomically through the agent directory's handle.
func (s *State) save(root string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("save agent state: %w", err)
	}
	dir, err := OpenAgentDir(root)
	if err != nil {
		return fmt.Errorf("save agent state: %w", err)
	}
	defer dir.Close()
	if _, err := dir.WriteFile(stateFile, bytes.NewReader(append(data, '\n')), 0o600); err != nil {
		return fmt.Errorf("save agent state: %w", err)
	}
	return nil
}
