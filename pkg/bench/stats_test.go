package bench

import (
	"math"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"single", []float64{7}, 99, 7},
		{"median odd", []float64{3, 1, 2}, 50, 2},
		{"median even interpolates", []float64{4, 1, 3, 2}, 50, 2.5},
		{"p0 is min", []float64{5, 9, 1}, 0, 1},
		{"p100 is max", []float64{5, 9, 1}, 100, 9},
		{"p99 of 101 values", seq(101), 99, 99},
		{"p90 interpolates", []float64{0, 10}, 90, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.xs, tc.p); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tc.xs, tc.p, got, tc.want)
			}
		})
	}
}

func TestPercentileEmptyAndUnmodified(t *testing.T) {
	if got := Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("Percentile(nil) = %v, want NaN", got)
	}
	xs := []float64{3, 1, 2}
	Median(xs)
	if xs[0] != 3 || xs[1] != 1 || xs[2] != 2 {
		t.Errorf("Median sorted its input: %v", xs)
	}
}

func TestSpreadOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		want Spread
	}{
		{"empty", nil, Spread{}},
		{"one", []float64{4}, Spread{Min: 4, Max: 4}},
		{"many", []float64{4, -1, 9, 2}, Spread{Min: -1, Max: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SpreadOf(tc.xs); got != tc.want {
				t.Errorf("SpreadOf(%v) = %+v, want %+v", tc.xs, got, tc.want)
			}
		})
	}
}

func TestLatenciesOf(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	got := LatenciesOf(ds)
	if math.Abs(got.P50-50.5) > 1e-9 || math.Abs(got.P99-99.01) > 1e-9 {
		t.Errorf("LatenciesOf(1..100ms) = %+v, want p50 50.5, p99 99.01", got)
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i)
	}
	return out
}
