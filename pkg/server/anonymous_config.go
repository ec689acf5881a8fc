package server

import (
	"errors"
	"fmt"
	"time"
)

// AnonymousConfig bounds and summarises requests that carry no client
// certificate. Zero fields take the Default* values.
type AnonymousConfig struct {
	// Rate is how many anonymous requests per second one source may send
	// once its burst is spent.
	Rate float64
	// Burst is how many anonymous requests one source may send at once.
	Burst int
	// MaxSources bounds how many sources the limiter tracks; the one seen
	// least recently is forgotten to make room.
	MaxSources int
	// SummaryInterval is how often failed anonymous requests are
	// summarised into one audit entry (when there were any).
	SummaryInterval time.Duration
	// SummaryTicks replaces the summary ticker, for tests; nil means a
	// ticker every SummaryInterval.
	SummaryTicks <-chan time.Time
}

// errBadAnonymous is wrapped by AnonymousConfig's validation errors.
var errBadAnonymous = errors.New("invalid anonymous request limits")

// withDefaults validates c and fills its zero fields.
func (c AnonymousConfig) withDefaults() (AnonymousConfig, error) {
	if c.Rate < 0 || c.Burst < 0 || c.MaxSources < 0 || c.SummaryInterval < 0 {
		return c, fmt.Errorf("check anonymous limits %+v: must not be negative: %w", c, errBadAnonymous)
	}
	if c.Rate == 0 {
		c.Rate = DefaultAnonymousRate
	}
	if c.Burst == 0 {
		c.Burst = DefaultAnonymousBurst
	}
	if c.MaxSources == 0 {
		c.MaxSources = DefaultAnonymousSources
	}
	if c.SummaryInterval == 0 {
		c.SummaryInterval = DefaultSummaryInterval
	}
	return c, nil
}
