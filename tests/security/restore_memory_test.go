package security

import (
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
)

// uploadSize is the garbage snapshot's size.
const uploadSize = 100 << 20

// garbage is an io.Reader of n pseudo-random bytes, made as they are read
// so the test itself holds none of them.
type garbage struct {
	rng *rand.ChaCha8
	n   int64
	// prefix is sent first.
	prefix *strings.Reader
	// fill, when not zero, is sent instead of random bytes.
	fill byte
}

// size is how many bytes the reader yields in all.
func (g *garbage) size() int64 {
	if g.prefix == nil {
		return g.n
	}
	return int64(g.prefix.Len()) + g.n
}

func (g *garbage) Read(p []byte) (int, error) {
	if g.prefix != nil && g.prefix.Len() > 0 {
		return g.prefix.Read(p)
	}
	if g.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.n {
		p = p[:g.n]
	}
	if g.fill != 0 {
		for i := range p {
			p[i] = g.fill
		}
	} else {
		_, _ = g.rng.Read(p)
	}
	g.n -= int64(len(p))
	return len(p), nil
}

// TestGarbageSnapshotRestoreBoundedMemory uploads 100 MB snapshots that are
// not snapshots: each is refused with 400 bad-request, and the process
// allocates far less than the upload while refusing it.
func TestGarbageSnapshotRestoreBoundedMemory(t *testing.T) {
	e := newEnv(t, 1)
	l := e.leader()
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	header := `{"format":"kcore-store-snapshot","schema":1,"lastIndex":5,"kindIndex":{},"objects":1}` + "\n"
	tests := []struct {
		name string
		body func() *garbage
		// most is the most the process may allocate during the call.
		most uint64
	}{
		{"random bytes", func() *garbage {
			return &garbage{rng: rand.NewChaCha8([32]byte{1}), n: uploadSize}
		}, uploadSize / 4},
		{"no header line", func() *garbage { return &garbage{n: uploadSize, fill: 'x'} }, uploadSize / 4},
		{"valid header, endless object", func() *garbage {
			return &garbage{prefix: strings.NewReader(header + `{"kind":"Secret","name":"a","data":"`), n: uploadSize, fill: 'a'}
		}, uploadSize / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.body()
			req, err := http.NewRequest(http.MethodPut, "https://"+l.Addr+apiv1.PathSnapshot, body)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = body.size()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			resp, err := admin.Do(req)
			if err != nil {
				t.Fatalf("restore: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			runtime.ReadMemStats(&after)
			r := response{status: resp.StatusCode, body: b}
			want(t, r, http.StatusBadRequest, apiv1.CodeBadRequest)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > tt.most {
				t.Fatalf("refusing a %d MiB garbage snapshot allocated %d MiB, want at most %d MiB",
					uploadSize>>20, grew>>20, tt.most>>20)
			}
			t.Logf("refused with %s", r.body)
		})
	}
}
