package chaos

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"kcore.dev/kcore/tests/proccluster"
)

// TestCheckElections: one leader per term passes, two in one term fail,
// and logs without any election fail as vacuous.
func TestCheckElections(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) *proccluster.Replica {
		path := filepath.Join(dir, name+".log")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return &proccluster.Replica{ID: name, LogPath: path}
	}
	line := func(term string) string {
		return `time=2026-01-01T00:00:00Z level=INFO msg="became raft leader" term=` + term + "\n"
	}
	r0 := write("r0", line("2")+"level=INFO msg=other term=3\n"+line("4"))
	r1 := write("r1", line("3"))
	if err := checkElections([]*proccluster.Replica{r0, r1}); err != nil {
		t.Fatalf("distinct terms: %v", err)
	}
	r2 := write("r2", line("4"))
	if err := checkElections([]*proccluster.Replica{r0, r1, r2}); !errors.Is(err, ErrTwoLeaders) {
		t.Fatalf("two leaders in term 4: %v, want ErrTwoLeaders", err)
	}
	quiet := write("quiet", "level=INFO msg=other\n")
	if err := checkElections([]*proccluster.Replica{quiet}); !errors.Is(err, ErrNoElections) {
		t.Fatalf("no elections: %v, want ErrNoElections", err)
	}
}
