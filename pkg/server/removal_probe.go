package server

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// RemovalProbeTimeout bounds how long the leader waits for each voter that
// would remain after a removal to answer GET /v1/health; one that does not
// answer in time counts as down.
const RemovalProbeTimeout = time.Second

// checkRemainingVoters refuses the removal of raft id with ErrQuorumLoss
// unless a quorum (floor(v/2)+1) of the v voters that would remain answer
// now: this replica, and each other one that answers GET /v1/health within
// RemovalProbeTimeout over the controllers' mutual TLS. raft alone counts a
// follower down only once a heartbeat to it fails, which for a paused
// process that still holds its sockets takes the transport's timeout: a
// removal asked in that window would leave the voters without a quorum
// (and the cluster without a leader) until the paused one runs again.
// Asking is what catches it. A voter that recorded no API address is
// left to raft's own check.
func (s *Server) checkRemainingVoters(ctx context.Context, id string) error {
	if s.forwarder == nil {
		return nil
	}
	peers, err := s.backend.Peers(ctx)
	if err != nil {
		return fmt.Errorf("remove member %s: %w", id, err)
	}
	self := s.backend.ID()
	var rest []string
	for _, p := range peers {
		if p.ID != id && p.Suffrage == "voter" {
			rest = append(rest, p.ID)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	var (
		mu     sync.Mutex
		silent []string
		wg     sync.WaitGroup
	)
	for _, p := range rest {
		addr := s.memberHTTP(p)
		if p == self || addr == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.probeReplica(ctx, addr); err != nil {
				mu.Lock()
				silent = append(silent, p)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	quorum := len(rest)/2 + 1
	if answering := len(rest) - len(silent); answering < quorum {
		sort.Strings(silent)
		return fmt.Errorf("remove member %s: %d voters would remain and %d of them answer (%s did not within %s), quorum needs %d: %w",
			id, len(rest), answering, strings.Join(silent, ", "), RemovalProbeTimeout, quorum, ErrQuorumLoss)
	}
	return nil
}

// probeReplica asks the replica at addr for GET /v1/health, at most
// RemovalProbeTimeout.
func (s *Server) probeReplica(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, RemovalProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/v1/health", nil)
	if err != nil {
		return err
	}
	resp, err := s.forwarder.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /v1/health on %s: %s", addr, resp.Status)
	}
	return nil
}
