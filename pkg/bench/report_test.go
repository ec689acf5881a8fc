package bench

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{1234.4, "1234"},
		{12.34, "12.3"},
		{1.234, "1.23"},
		{0.1234, "0.123"},
		{0.5, "0.5"},
		{0, "0"},
	} {
		if got := num(tc.in); got != tc.want {
			t.Errorf("num(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFigureReferenceAndTarget(t *testing.T) {
	f := measured("1/64", "writes", "writes/s", []float64{100, 300, 200}).withReference("etcd", 400)
	f = f.withTarget("ratio >= 1.0", *f.Ratio >= 1)
	if *f.Value != 200 || f.Spread.Min != 100 || f.Spread.Max != 300 || f.Runs != 3 {
		t.Errorf("measured = value %v spread %+v runs %d, want 200 {100 300} 3", *f.Value, *f.Spread, f.Runs)
	}
	if *f.Ratio != 0.5 || *f.Met {
		t.Errorf("ratio %v met %v, want 0.5 false", *f.Ratio, *f.Met)
	}
	nm := notMeasured("5b", "vip", "needs the lab").withTarget("< 4 s", true)
	if nm.Met != nil || nm.Value != nil {
		t.Errorf("a row without a value has met %v value %v, want both nil", nm.Met, nm.Value)
	}
	var b bytes.Buffer
	if err := (Report{Figures: []Figure{f, nm}}).PrintTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"200 writes/s [100-300] n=3", "400 writes/s (etcd)", "NO", "not measured: needs the lab"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestFigureNumber(t *testing.T) {
	for id, want := range map[string]int{"0a": 0, "1/256": 1, "5a": 5, "6": 6, "": 0} {
		if got := figureNumber(id); got != want {
			t.Errorf("figureNumber(%q) = %d, want %d", id, got, want)
		}
	}
}

func TestLogTime(t *testing.T) {
	got, ok := logTime(`time=2026-11-29T22:50:20.123Z level=WARN msg="heartbeat timeout reached, starting election"`)
	if !ok || got.Nanosecond() != 123_000_000 || got.Second() != 20 {
		t.Errorf("logTime = %v, %v; want 22:50:20.123", got, ok)
	}
	if _, ok := logTime("no time here"); ok {
		t.Error("logTime found a time in a line without one")
	}
}

// TestReportWithFailedRunsEncodes: a run where no request succeeded has a
// NaN latency; the report still encodes (JSON has no NaN) and the figure
// keeps the runs that had a value.
func TestReportWithFailedRunsEncodes(t *testing.T) {
	nan := LatenciesOf(nil).P99
	figs := []Figure{
		measured("1/256", "p99", "ms", []float64{nan, 20, 10}).withReference("etcd", 5),
		measured("1/256", "p99 all failed", "ms", []float64{nan, nan}).withReference("etcd", nan),
	}
	if figs[0].Runs != 2 || *figs[0].Value != 15 {
		t.Fatalf("figure over runs with a value: %+v", figs[0])
	}
	if figs[1].Value != nil || figs[1].Reference != nil || figs[1].Note == "" {
		t.Fatalf("figure without a value: %+v", figs[1])
	}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := (Report{Figures: figs}).WriteJSON(path); err != nil {
		t.Fatal(err)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{5: "5", 100: "100", 1000: "1,000", 5000: "5,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
