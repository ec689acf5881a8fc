package server

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

func TestFailureReasons(t *testing.T) {
	join := &route{pattern: "POST /v1/join", anonymous: true}
	other := &route{pattern: "GET /v1/objects/{kind}"}
	for _, tt := range []struct {
		rt     *route
		status int
		want   string
	}{
		{join, http.StatusBadRequest, apiv1.ReasonBadRequest},
		{join, http.StatusUnauthorized, apiv1.ReasonJoinRefused},
		{other, http.StatusUnauthorized, apiv1.ReasonUnauthenticated},
		{join, http.StatusRequestEntityTooLarge, apiv1.ReasonTooLarge},
		{other, http.StatusTooManyRequests, apiv1.ReasonRateLimited},
		{nil, http.StatusNotFound, apiv1.ReasonOther},
		{join, http.StatusServiceUnavailable, apiv1.ReasonOther},
	} {
		got := failureReason(tt.rt, tt.status)
		if got != tt.want {
			t.Errorf("failureReason(%v, %d) = %q, want %q", tt.rt, tt.status, got, tt.want)
		}
		if !knownReason(got) {
			t.Errorf("reason %q is not a known reason", got)
		}
	}
}

func TestSummaryCountsAtMostMaxSources(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var a anonTracker
	if _, ok := a.take(); ok {
		t.Fatal("summary with nothing counted")
	}
	for i := range MaxSummarySources {
		a.add(apiv1.ReasonBadRequest, fmt.Sprintf("src-%04d", i), start)
	}
	a.add(apiv1.ReasonBadRequest, "src-0007", start)
	a.add(apiv1.ReasonJoinRefused, "past-the-bound", start)
	a.add(apiv1.ReasonJoinRefused, "past-the-bound-too", start)
	c, ok := a.take()
	if !ok {
		t.Fatal("nothing to summarise")
	}
	sum := c.summary("r1", start.Add(time.Minute))
	if sum.Total != MaxSummarySources+3 || sum.Sources != MaxSummarySources || sum.OtherSources != 2 {
		t.Fatalf("total %d, sources %d, other %d; want %d, %d, 2", sum.Total, sum.Sources, sum.OtherSources, MaxSummarySources+3, MaxSummarySources)
	}
	if len(sum.TopSources) != SummaryTopSources || sum.TopSources[0] != (apiv1.SourceCount{Source: "src-0007", Count: 2}) {
		t.Fatalf("top sources %+v", sum.TopSources)
	}
	if sum.Reasons[apiv1.ReasonJoinRefused] != 2 || sum.Since != "2026-11-29T12:00:00Z" || sum.Until != "2026-11-29T12:01:00Z" {
		t.Fatalf("summary %+v", sum)
	}
	if _, ok := a.take(); ok {
		t.Fatal("counts not reset by take")
	}
	if err := checkSummary(sum); err != nil {
		t.Fatalf("own summary refused: %v", err)
	}
}

func TestSummaryPutBackMerges(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var a anonTracker
	a.add(apiv1.ReasonBadRequest, "a", start)
	c, _ := a.take()
	a.add(apiv1.ReasonJoinRefused, "a", start.Add(time.Minute))
	a.add(apiv1.ReasonJoinRefused, "b", start.Add(time.Minute))
	a.putBack(c)
	merged, _ := a.take()
	sum := merged.summary("r1", start.Add(time.Hour))
	if sum.Total != 3 || sum.Reasons[apiv1.ReasonBadRequest] != 1 || sum.Reasons[apiv1.ReasonJoinRefused] != 2 ||
		sum.Since != "2026-11-29T12:00:00Z" || sum.TopSources[0] != (apiv1.SourceCount{Source: "a", Count: 2}) {
		t.Fatalf("merged summary %+v", sum)
	}
}

func TestCheckSummaryBounds(t *testing.T) {
	ok := apiv1.AnonymousSummary{Replica: "r1", Since: "2026-11-29T12:00:00Z", Until: "2026-11-29T12:10:00Z", Reasons: map[string]uint64{apiv1.ReasonOther: 1}}
	if err := checkSummary(ok); err != nil {
		t.Fatal(err)
	}
	tooMany := ok
	for i := range SummaryTopSources + 1 {
		tooMany.TopSources = append(tooMany.TopSources, apiv1.SourceCount{Source: fmt.Sprint(i), Count: 1})
	}
	unknown := ok
	unknown.Reasons = map[string]uint64{"made-up": 1}
	noReplica := ok
	noReplica.Replica = ""
	badTime := ok
	badTime.Since = "yesterday"
	for name, sum := range map[string]apiv1.AnonymousSummary{"too many sources": tooMany, "unknown reason": unknown, "no replica": noReplica, "bad time": badTime} {
		if err := checkSummary(sum); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	atBound := ok
	atBound.TopSources = tooMany.TopSources[:SummaryTopSources]
	if err := checkSummary(atBound); err != nil {
		t.Errorf("%d sources refused: %v", SummaryTopSources, err)
	}
}

func TestRetentionPolicy(t *testing.T) {
	b, err := AuditRetention{}.policy()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"maxAgeSeconds":%d,"maxEntries":%d,"maxBytes":%d}`, int64(DefaultAuditMaxAge/time.Second), DefaultAuditMaxEntries, DefaultAuditMaxBytes)
	if string(b) != want {
		t.Fatalf("default policy %s, want %s", b, want)
	}
	for _, bad := range []AuditRetention{{MaxAge: -1}, {MaxEntries: -1}, {MaxBytes: -1}, {MaxAge: time.Millisecond}} {
		if _, err := bad.policy(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := (AnonymousConfig{Rate: -1}).withDefaults(); err == nil {
		t.Error("negative rate accepted")
	}
}
