package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Sentinel errors of Read.
var (
	// ErrUnsupportedVersion means the plan was written in a format version this build does not read.
	ErrUnsupportedVersion = errors.New("unsupported plan format version")
	// ErrHashMismatch means the plan's content does not match its hash: it was edited or damaged.
	ErrHashMismatch = errors.New("plan hash does not match its content")
)

// hashOf is the hex SHA-256 of the canonical encoding of the plan's version,
// index and clusters (actions, diffs, steps and desired objects). Go's JSON
// encoding is canonical here: struct fields in declaration order, map keys sorted.
func hashOf(p *Plan) string {
	b, err := json.Marshal(struct {
		Version  int           `json:"version"`
		Index    uint64        `json:"index"`
		Clusters []ClusterPlan `json:"clusters"`
	}{p.Version, p.Index, p.Clusters})
	if err != nil {
		// The types above contain only strings, numbers, bools, slices and
		// string-keyed maps, which always marshal.
		panic(fmt.Sprintf("hash plan: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Read decodes a JSON plan, refusing a format version other than
// FormatVersion and a plan whose content does not match its hash.
func Read(r io.Reader) (*Plan, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("decode plan: %w", err)
	}
	if head.Version == nil {
		return nil, fmt.Errorf("decode plan: no version field: %w", ErrUnsupportedVersion)
	}
	if *head.Version != FormatVersion {
		return nil, fmt.Errorf("decode plan: version %d, this kcore reads version %d: %w", *head.Version, FormatVersion, ErrUnsupportedVersion)
	}
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("decode plan: %w", err)
	}
	if p.Clusters == nil {
		p.Clusters = []ClusterPlan{}
	}
	if got := hashOf(&p); got != p.Hash {
		return nil, fmt.Errorf("decode plan: hash %s, content hashes to %s: %w", p.Hash, got, ErrHashMismatch)
	}
	return &p, nil
}

// Write encodes p as indented JSON, the format Read reads.
func Write(w io.Writer, p *Plan) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}
