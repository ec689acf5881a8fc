package agent

import (
	"sync"
	"time"

	"kcore.dev/kcore/pkg/runtime"
)

// HealthyReuse is how long a unit's passed probe stands for the process
// that passed it. Right after a unit turns healthy, every unit and task
// waiting for it asks again; on a busy machine the API server that just
// answered /readyz could take a second more to answer the next probe
// (measured on a new cluster's first control plane, while the three
// controllers and kube-proxy that waited for it start), and the add-ons'
// tasks waited that second. A new process (another PID, or the runtime's
// restart count moved) is probed afresh, as is a failed answer.
const HealthyReuse = time.Second

// passedProbes remembers, per unit, the process whose probe last passed.
// The zero value is ready to use.
type passedProbes struct {
	mu   sync.Mutex
	last map[string]passedProbe
	now  func() time.Time // nil: time.Now
}

// passedProbe is one unit's process and when its probe passed.
type passedProbe struct {
	pid, restarts int
	at            time.Time
}

func (p *passedProbes) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// recent reports whether st's process passed its probe less than
// HealthyReuse ago. A runtime that does not know the PID never matches.
func (p *passedProbes) recent(name string, st runtime.UnitStatus) bool {
	if st.PID == 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.last[name]
	return ok && r.pid == st.PID && r.restarts == st.Restarts && p.clock().Sub(r.at) < HealthyReuse
}

// record notes that st's process passed its probe now.
func (p *passedProbes) record(name string, st runtime.UnitStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[string]passedProbe{}
	}
	p.last[name] = passedProbe{pid: st.PID, restarts: st.Restarts, at: p.clock()}
}
