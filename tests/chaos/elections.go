package chaos

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/raftnode"
	"kcore.dev/kcore/tests/proccluster"
)

// ErrTwoLeaders: two replicas logged that they became leader in the same
// raft term.
var ErrTwoLeaders = errors.New("two leaders in one term")

// ErrNoElections: no replica logged raftnode.LogBecameLeader, so the
// election check would be vacuous.
var ErrNoElections = errors.New("no replica logged becoming leader")

// checkElections reads every replica's log for raftnode.LogBecameLeader
// lines and fails when one term has two leaders, or when there are none.
func checkElections(replicas []*proccluster.Replica) error {
	leaders := map[uint64]string{}
	for _, r := range replicas {
		terms, err := leaderTerms(r.LogPath)
		if err != nil {
			return err
		}
		for _, term := range terms {
			if other, ok := leaders[term]; ok && other != r.ID {
				return fmt.Errorf("term %d: %s and %s: %w", term, other, r.ID, ErrTwoLeaders)
			}
			leaders[term] = r.ID
		}
	}
	if len(leaders) == 0 {
		return ErrNoElections
	}
	return nil
}

// leaderTerms returns the terms a replica's log says it became leader in.
func leaderTerms(path string) ([]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read leader terms: %w", err)
	}
	defer f.Close()
	msg := "msg=" + strconv.Quote(raftnode.LogBecameLeader)
	term := regexp.MustCompile(` term=(\d+)`)
	var out []uint64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, msg) {
			continue
		}
		m := term.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("read leader terms of %s: no term in %q", path, line)
		}
		n, err := strconv.ParseUint(m[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("read leader terms of %s: %w", path, err)
		}
		out = append(out, n)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read leader terms of %s: %w", path, err)
	}
	return out, nil
}
