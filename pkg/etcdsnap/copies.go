package etcdsnap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// Fetcher returns the sealed file of snapshot name from another replica,
// asking those in replicas (the record's holders) first.
type Fetcher func(ctx context.Context, name string, replicas []string) ([]byte, error)

// KeepFetched fetches the sealed file of the snapshot info names, writes it
// to files and reads it back as a restore would (it opens under the key and
// the name, its SHA-256 is the record's, bbolt opens the database); a file
// that fails is removed again, so a bad copy never stands in for a good one.
func KeepFetched(ctx context.Context, files *Files, fetch Fetcher, info apiv1.EtcdSnapshotInfo) error {
	sealed, err := fetch(ctx, info.Name, info.Replicas)
	if err != nil {
		return err
	}
	if err := files.WriteSealed(info.Name, sealed); err != nil {
		return err
	}
	if err := files.verify(info); err != nil {
		return errors.Join(err, files.Remove(info.Name))
	}
	return nil
}

// CopyMissing makes files hold a copy of every snapshot file st records
// (location controller): each one files lacks is fetched and kept with
// KeepFetched, oldest name first, one at a time. It returns the names it
// copied; the errors of those it could not are joined.
func CopyMissing(ctx context.Context, files *Files, fetch Fetcher, st *store.State) ([]string, error) {
	held, err := files.Names()
	if err != nil {
		return nil, err
	}
	objs := st.ListPrefix(apiv1.KindEtcdSnapshot, "")
	sort.Slice(objs, func(i, j int) bool { return objs[i].Name < objs[j].Name })
	var copied []string
	var errs []error
	for _, o := range objs {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		var s Stored
		if err := json.Unmarshal(o.Data, &s); err != nil {
			errs = append(errs, fmt.Errorf("decode etcd snapshot %s: %w", o.Name, err))
			continue
		}
		if s.Location != apiv1.EtcdSnapshotOnController {
			continue
		}
		if slices.Contains(held, o.Name) {
			continue
		}
		if err := KeepFetched(ctx, files, fetch, s.EtcdSnapshotInfo); err != nil {
			errs = append(errs, fmt.Errorf("copy etcd snapshot %s: %w", o.Name, err))
			continue
		}
		copied = append(copied, o.Name)
	}
	return copied, errors.Join(errs...)
}
