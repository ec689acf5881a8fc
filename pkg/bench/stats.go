package bench

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0..100) of xs by linear
// interpolation between closest ranks; NaN for an empty slice. xs is not
// modified.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return sortedPercentile(s, p)
}

func sortedPercentile(s []float64, p float64) float64 {
	if p <= 0 {
		return s[0]
	}
	if p >= 100 {
		return s[len(s)-1]
	}
	rank := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	frac := rank - float64(lo)
	return s[lo] + (s[hi]-s[lo])*frac
}

// Median returns the 50th percentile of xs.
func Median(xs []float64) float64 { return Percentile(xs, 50) }

// Spread is the range of a figure over its runs.
type Spread struct {
	// Min and Max are the lowest and highest run values.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// SpreadOf returns the min and max of xs (zero for an empty slice).
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	return Spread{Min: slices.Min(xs), Max: slices.Max(xs)}
}

// Millis converts durations to float milliseconds.
func Millis(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}

// Latencies are the p50 and p99 of one sample, in milliseconds.
type Latencies struct {
	P50 float64
	P99 float64
}

// LatenciesOf returns the p50 and p99 of ds in milliseconds.
func LatenciesOf(ds []time.Duration) Latencies {
	ms := Millis(ds)
	slices.Sort(ms)
	if len(ms) == 0 {
		return Latencies{P50: math.NaN(), P99: math.NaN()}
	}
	return Latencies{P50: sortedPercentile(ms, 50), P99: sortedPercentile(ms, 99)}
}
