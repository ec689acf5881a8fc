package agent

import (
	"errors"
	"fmt"

	"kcore.dev/kcore/pkg/api"
)

// checkedFile is one rendered file after checkAll: its name beneath the
// root and its measured content, or the decode error that fails the item
// (and only it).
type checkedFile struct {
	rel     string
	decoded decoded
	err     error
}

func (a *Applier) maxFileBytes() int64 {
	if a.MaxFileBytes > 0 {
		return a.MaxFileBytes
	}
	return DefaultMaxFileBytes
}

func (a *Applier) maxStateBytes() int64 {
	if a.MaxStateBytes > 0 {
		return a.MaxStateBytes
	}
	return DefaultMaxStateBytes
}

// checkAll checks a NodeState before any of it is applied: every file and
// mount path against the allow-list and AgentDir, then every file's decoded
// size against MaxFileBytes and all of them together against
// MaxStateBytes (decoding as a stream, keeping nothing). A path or a size
// refused refuses the whole state: refused holds the failed items and the
// other files and volumes as pending, why says what for the units and tasks.
func (a *Applier) checkAll(ns *api.NodeState) (files map[string]checkedFile, refused []api.ItemStatus, why string) {
	files = map[string]checkedFile{}
	bad := map[string]error{} // failed items by kind/name
	for _, f := range ns.Files {
		rel, err := Resolve(f.Path)
		if err != nil {
			bad[KindFile+"/"+f.Path] = err
		}
		files[f.Path] = checkedFile{rel: rel}
	}
	for _, v := range append(append([]api.VolumeOp(nil), ns.Volumes...), ns.PurgeVolumes...) {
		if v.MountPath == "" {
			continue
		}
		if _, err := Resolve(v.MountPath); err != nil {
			bad[KindVolume+"/"+v.Name] = err
		}
	}
	why = "the node state has paths outside the allow-list"
	if len(bad) == 0 {
		why = fmt.Sprintf("the node state's files decode to more than the limits (%d bytes a file, %d in all)", a.maxFileBytes(), a.maxStateBytes())
		a.measureAll(ns, files, bad)
	}
	if len(bad) == 0 {
		return files, nil, ""
	}
	for _, f := range ns.Files {
		refused = append(refused, refusedItem(KindFile, f.Path, bad))
	}
	for _, v := range append(append([]api.VolumeOp(nil), ns.Volumes...), ns.PurgeVolumes...) {
		refused = append(refused, refusedItem(KindVolume, v.Name, bad))
	}
	a.log().Error("refused node state", "cluster", ns.Cluster, "generation", ns.Generation, "reason", why)
	return nil, refused, why
}

// measureAll measures every file of ns into files, recording in bad the
// ones past a cap; it stops at the first, so at most MaxStateBytes plus one
// byte is ever decoded.
func (a *Applier) measureAll(ns *api.NodeState, files map[string]checkedFile, bad map[string]error) {
	var total int64
	for _, f := range ns.Files {
		c := files[f.Path]
		limit := min(a.maxFileBytes(), a.maxStateBytes()-total)
		d, err := measure(f, limit)
		if errors.Is(err, ErrTooLarge) {
			if limit < a.maxFileBytes() {
				err = fmt.Errorf("decode %s: %w: the node state's files together are larger than %d bytes", f.Path, ErrTooLarge, a.maxStateBytes())
			}
			bad[KindFile+"/"+f.Path] = err
			return
		}
		c.decoded, c.err = d, err
		files[f.Path] = c
		total += d.size
	}
}

// refusedItem is the item of a refused state: failed with its error, or
// pending.
func refusedItem(kind, name string, bad map[string]error) api.ItemStatus {
	if err, ok := bad[kind+"/"+name]; ok {
		return api.ItemStatus{Kind: kind, Name: name, State: api.ItemFailed, Message: err.Error()}
	}
	return api.ItemStatus{Kind: kind, Name: name, State: api.ItemPending, Message: "not applied: another item of the node state was refused"}
}
