package security

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"kcore.dev/kcore/pkg/agent"
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/runtime"
	"kcore.dev/kcore/pkg/volume"
)

// The node agent writes what the controller renders, under its --root and
// inside an allow-list. These tests apply hostile NodeStates to a real
// Applier over a temporary root and check that nothing lands outside it,
// that the agent's own directory is out of reach, and that compressed
// content cannot blow up the disk or the agent's memory.

// newApplier is an Applier over a fresh temporary root with the supervisor
// runtime and the given volume ensurer.
func newApplier(t *testing.T, vols agent.VolumeEnsurer) (*agent.Applier, string) {
	t.Helper()
	root := t.TempDir()
	sup, err := runtime.NewSupervisor(runtime.SupervisorConfig{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Close() })
	return &agent.Applier{Root: root, Runtime: sup, Volumes: vols}, root
}

// swapper is a volume ensurer that, while "ensuring", replaces a directory
// under the root by a symlink to somewhere outside: it runs after the agent
// checked the NodeState's paths and before it writes the files.
type swapper struct {
	dir, target string
}

func (s swapper) Ensure(context.Context, api.VolumeOp) (volume.Outcome, error) {
	if err := os.RemoveAll(s.dir); err != nil {
		return volume.Outcome{}, err
	}
	return volume.Outcome{}, os.Symlink(s.target, s.dir)
}

func (s swapper) Purge(context.Context, api.VolumeOp) error { return nil }

// assertEmpty fails when anything was written into dir.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("the agent wrote %s outside its root", filepath.Join(dir, e.Name()))
	}
}

// itemsOf returns the report items of the given kind by name.
func itemsOf(reports []api.NodeReport, kind string) map[string]api.ItemStatus {
	out := map[string]api.ItemStatus{}
	for _, r := range reports {
		for _, it := range r.Items {
			if it.Kind == kind {
				out[it.Name] = it
			}
		}
	}
	return out
}

func fileState(gen int64, files ...api.File) api.NodeState {
	return api.NodeState{NodeID: "n1", Cluster: "c1", Generation: gen, Files: files}
}

// TestAgentSymlinkSwapAfterCheck swaps a directory of the root for a
// symlink to outside after the paths were checked and before the files
// are written: the write must not follow it.
func TestAgentSymlinkSwapAfterCheck(t *testing.T) {
	outside := t.TempDir()
	a, root := newApplier(t, nil)
	pki := filepath.Join(root, "etc/kubernetes/pki")
	if err := os.MkdirAll(pki, 0o755); err != nil {
		t.Fatal(err)
	}
	a.Volumes = swapper{dir: pki, target: outside}
	ns := fileState(1, api.File{Path: "/etc/kubernetes/pki/ca.key", Content: "stolen", Mode: 0o600})
	ns.Volumes = []api.VolumeOp{{Name: "v", Class: volume.ClassLVM, Pool: "vg", SizeBytes: 1 << 20}}
	reports, err := a.Apply(context.Background(), []api.NodeState{ns})
	if err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, outside)
	if it := itemsOf(reports, agent.KindFile)["/etc/kubernetes/pki/ca.key"]; it.State != api.ItemFailed {
		t.Errorf("file through a swapped symlink reported %+v, want failed", it)
	}
}

// TestAgentPreexistingSymlinksRefused applies files whose paths cross
// symlinks already under the root — absolute and relative, out of the root
// and into the agent's own directory — and paths with ".." or no leading
// slash: each is refused, nothing lands outside, the node key is kept.
func TestAgentPreexistingSymlinksRefused(t *testing.T) {
	outside := t.TempDir()
	a, root := newApplier(t, nil)
	key := []byte("node key")
	if err := agent.StoreCredentials(root, agent.Credentials{Cert: []byte("cert"), Key: key, CA: []byte("ca")}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "etc/kubernetes"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"etc/keepalived":       outside,
		"etc/kubernetes/rel":   "../../../" + filepath.Base(outside),
		"etc/kubernetes/agent": "../../var/lib/kcore/agent",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{
		"/etc/keepalived/keepalived.conf",
		"/etc/kubernetes/rel/x",
		"/etc/kubernetes/agent/node.key",
		"/etc/kubernetes/../../" + filepath.Base(outside) + "/x",
		"etc/kubernetes/x",
	} {
		reports, err := a.Apply(context.Background(), []api.NodeState{fileState(1, api.File{Path: p, Content: "owned"})})
		if err != nil {
			t.Fatal(err)
		}
		if it := itemsOf(reports, agent.KindFile)[p]; it.State != api.ItemFailed {
			t.Errorf("%s reported %+v, want failed", p, it)
		}
	}
	assertEmpty(t, outside)
	if creds, _, err := agent.LoadCredentials(root); err != nil || !bytes.Equal(creds.Key, key) {
		t.Errorf("node key after the applies = %q, %v; want it untouched", creds.Key, err)
	}
}

// TestAgentSymlinkSwapRace applies NodeStates while another goroutine keeps
// swapping a directory of the root for a symlink to outside and back.
func TestAgentSymlinkSwapRace(t *testing.T) {
	const iterations = 100
	outside := t.TempDir()
	a, root := newApplier(t, nil)
	pki := filepath.Join(root, "etc/kubernetes/pki")
	saved := filepath.Join(root, "etc/kubernetes/pki.saved")
	if err := os.MkdirAll(pki, 0o755); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Errors are expected: the agent may recreate the directory in between.
			_ = os.Rename(pki, saved)
			_ = os.Symlink(outside, pki)
			goruntime.Gosched()
			_ = os.Remove(pki)
			_ = os.Rename(saved, pki)
			_ = os.RemoveAll(saved)
		}
	}()
	for i := range iterations {
		ns := fileState(int64(i+1),
			api.File{Path: "/etc/kubernetes/pki/ca.key", Content: fmt.Sprintf("key %d", i), Mode: 0o600},
			api.File{Path: "/etc/kubernetes/pki/sub/dir/x.crt", Content: fmt.Sprintf("crt %d", i)})
		if _, err := a.Apply(context.Background(), []api.NodeState{ns}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	assertEmpty(t, outside)
}

// TestAgentRefusesItsOwnDirectory renders files into the agent's own
// directory: the whole NodeState is refused, each such file is reported,
// and the node key, the agent state and the volume records are untouched.
func TestAgentRefusesItsOwnDirectory(t *testing.T) {
	a, root := newApplier(t, nil)
	key := []byte("-----BEGIN EC PRIVATE KEY-----\nnode\n-----END EC PRIVATE KEY-----\n")
	if err := agent.StoreCredentials(root, agent.Credentials{Cert: []byte("cert"), Key: key, CA: []byte("ca")}); err != nil {
		t.Fatal(err)
	}
	records := filepath.Join(root, "var/lib/kcore/volumes.json")
	if err := os.WriteFile(records, []byte(`{"data":{"owned":false}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	hostile := []string{"/var/lib/kcore/agent/node.key", "/var/lib/kcore/volumes.json", "/var/lib/kcore/agent-state.json", "/var/lib/kcore/controller/raft.db"}
	files := []api.File{{Path: "/etc/kubernetes/innocent.conf", Content: "x"}}
	for _, p := range hostile {
		files = append(files, api.File{Path: p, Content: "overwritten"})
	}
	ns := fileState(1, files...)
	ns.Units = []api.Unit{{Name: "u", Argv: []string{"/bin/true"}, InputHash: "h"}}
	reports, err := a.Apply(context.Background(), []api.NodeState{ns})
	if err != nil {
		t.Fatal(err)
	}
	items := itemsOf(reports, agent.KindFile)
	for _, p := range hostile {
		if it := items[p]; it.State != api.ItemFailed || !strings.Contains(it.Message, "agent's own directory") {
			t.Errorf("%s reported %+v, want failed naming the agent's own directory", p, it)
		}
	}
	if it := itemsOf(reports, agent.KindUnit)["u"]; it.State != api.ItemPending {
		t.Errorf("unit of a refused state reported %+v, want pending", it)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/kubernetes/innocent.conf")); err == nil {
		t.Error("a file of a refused state was written")
	}
	creds, ok, err := agent.LoadCredentials(root)
	if err != nil || !ok || !bytes.Equal(creds.Key, key) {
		t.Errorf("node key after the apply = %q, %v, %v; want it untouched", creds.Key, ok, err)
	}
	if got, _ := os.ReadFile(records); string(got) != `{"data":{"owned":false}}` {
		t.Errorf("volume records after the apply = %q, want them untouched", got)
	}
	if _, err := os.Stat(filepath.Join(root, "var/lib/kcore/controller")); err == nil {
		t.Error("the agent created a directory of the controller's data")
	}
}

// gzipZeros is gzip+base64 content that expands to n zero bytes (n a
// multiple of 1 MiB): one gzip member of 1 MiB of zeros, about 1 KiB,
// repeated — a reader takes concatenated members as one stream, so the
// bomb costs the test next to nothing to build.
func gzipZeros(t *testing.T, n int64) string {
	t.Helper()
	const member = 1 << 20
	if n%member != 0 {
		t.Fatalf("gzipZeros(%d): not a multiple of %d", n, member)
	}
	var one bytes.Buffer
	zw, err := gzip.NewWriterLevel(&one, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(make([]byte, member)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(bytes.Repeat(one.Bytes(), int(n/member)))
}

// applyMeasured applies states and returns the reports and the bytes the
// Go heap allocated meanwhile.
func applyMeasured(t *testing.T, a *agent.Applier, states []api.NodeState) ([]api.NodeReport, uint64) {
	t.Helper()
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	reports, err := a.Apply(context.Background(), states)
	goruntime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	return reports, after.TotalAlloc - before.TotalAlloc
}

// allocBound is how much the agent may allocate while refusing a bomb: far
// below the per-file cap, so no decompressed file was held in memory.
const allocBound = 16 << 20

// bombBytes is what the gzip bomb expands to: 1 GiB from about 1 MiB of
// gzip, like the state that once made an agent write a 1 GiB file.
const bombBytes = 1 << 30

// TestAgentGzipBombRefused sends one file whose gzip content expands far
// past the per-file cap.
func TestAgentGzipBombRefused(t *testing.T) {
	a, root := newApplier(t, nil)
	const path = "/var/lib/etcd-restore/1/snapshot.db"
	bomb := gzipZeros(t, bombBytes)
	t.Logf("gzip bomb: %d KiB of base64 expanding to %d MiB", len(bomb)>>10, bombBytes>>20)
	ns := fileState(1, api.File{Path: path, Encoding: api.EncodingGzipBase64, Content: bomb, Secret: true})
	reports, alloc := applyMeasured(t, a, []api.NodeState{ns})
	if it := itemsOf(reports, agent.KindFile)[path]; it.State != api.ItemFailed || !strings.Contains(it.Message, "larger than") {
		t.Errorf("gzip bomb reported %+v, want failed as too large", it)
	}
	if _, err := os.Stat(filepath.Join(root, path)); err == nil {
		t.Error("the gzip bomb was written")
	}
	if alloc > allocBound {
		t.Errorf("refusing a gzip bomb allocated %d MiB, want at most %d MiB", alloc>>20, allocBound>>20)
	}
}

// TestAgentStateTotalCapRefused sends files each under the per-file cap
// that together expand past the per-state cap.
func TestAgentStateTotalCapRefused(t *testing.T) {
	a, root := newApplier(t, nil)
	const size = agent.DefaultMaxFileBytes - 1<<20
	content := gzipZeros(t, size)
	var files []api.File
	for i := int64(0); i*size <= agent.DefaultMaxStateBytes; i++ {
		files = append(files, api.File{Path: fmt.Sprintf("/var/lib/etcd-restore/%d.db", i), Encoding: api.EncodingGzipBase64, Content: content})
	}
	reports, alloc := applyMeasured(t, a, []api.NodeState{fileState(1, files...)})
	for _, f := range files {
		if it := itemsOf(reports, agent.KindFile)[f.Path]; it.State == api.ItemOK {
			t.Errorf("%s of an oversized state reported ok", f.Path)
		}
		if _, err := os.Stat(filepath.Join(root, f.Path)); err == nil {
			t.Errorf("%s of an oversized state was written", f.Path)
		}
	}
	if alloc > allocBound {
		t.Errorf("refusing an oversized state allocated %d MiB, want at most %d MiB", alloc>>20, allocBound>>20)
	}
}
