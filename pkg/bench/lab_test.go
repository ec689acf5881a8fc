package bench

import (
	"math"
	"slices"
	"testing"
	"time"
)

// renderedKeepalived is the shape pkg/render writes for lab-n2.
const renderedKeepalived = `# keepalived for the API VIP of cluster lab on lab-n2, rendered by kcore.
global_defs {
    router_id lab-n2
    script_user root
    enable_script_security
}

vrrp_script kcore_api_health {
    script "/usr/bin/curl -sfk --max-time 1 -o /dev/null https://127.0.0.1:6444/readyz"
    interval 1
    timeout 2
    rise 2
    fall 2
    weight 0
}

vrrp_instance kcore_api {
    state BACKUP
    nopreempt
    interface eth0
    virtual_router_id 40
    priority 12
    advert_int 1
    unicast_src_ip 10.77.0.12
}
`

func TestParseKeepalived(t *testing.T) {
	tests := []struct {
		name    string
		conf    string
		want    vrrpParams
		down    float64
		wantErr bool
	}{
		{"rendered lab node", renderedKeepalived, vrrpParams{AdvertInt: 1, Priority: 12, Interval: 1, Fall: 2}, 3 + 244.0/256, false},
		{"priority 100, no script", "vrrp_instance x {\n priority 100\n advert_int 1\n}\n", vrrpParams{AdvertInt: 1, Priority: 100}, 3 + 156.0/256, false},
		{"advert 2", "vrrp_instance x {\n priority 255\n advert_int 2\n}\n", vrrpParams{AdvertInt: 2, Priority: 255}, 6 + 2.0/256, false},
		{"no instance", "global_defs {\n}\n", vrrpParams{}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseKeepalived(tt.conf)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if d := got.masterDown(); math.Abs(d-tt.down) > 1e-9 {
				t.Fatalf("masterDown = %v, want %v", d, tt.down)
			}
			if s := got.skew(); math.Abs(s-(tt.down-3*tt.want.AdvertInt)) > 1e-9 || s <= 0 {
				t.Fatalf("skew = %v, want master-down less 3 × advert_int", s)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	kill := time.Unix(1000, 0)
	at := func(ms int) time.Time { return kill.Add(time.Duration(ms) * time.Millisecond) }
	pr := func(sent, answered int, ok bool) probe { return probe{sent: at(sent), answered: at(answered), ok: ok} }
	tests := []struct {
		name            string
		probes          []probe
		first, restored time.Duration
		failed          int
		ok              bool
	}{
		{"never failed", []probe{pr(-100, -90, false), pr(0, 10, true), pr(100, 110, true)}, 10 * time.Millisecond, 10 * time.Millisecond, 0, true},
		{"outage", []probe{pr(0, 10, false), pr(100, 600, false), pr(700, 720, true)}, 720 * time.Millisecond, 720 * time.Millisecond, 2, true},
		{"flap", []probe{pr(0, 10, true), pr(100, 600, false), pr(700, 720, true)}, 10 * time.Millisecond, 720 * time.Millisecond, 1, true},
		{"no success", []probe{pr(0, 10, false)}, 0, 0, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, restored, failed, ok := summarize(tt.probes, kill)
			if first != tt.first || restored != tt.restored || failed != tt.failed || ok != tt.ok {
				t.Fatalf("got %s %s %d %v, want %s %s %d %v", first, restored, failed, ok, tt.first, tt.restored, tt.failed, tt.ok)
			}
		})
	}
}

func TestFloorArgv(t *testing.T) {
	argv := []string{"etcd", "--data-dir=/var/lib/kcore-lab/n1/var/lib/etcd", "--initial-cluster-state=existing",
		"--cert-file=/var/lib/kcore-lab/n1/etc/kubernetes/pki/etcd/server.crt", "--name=lab-n1"}
	want := []string{"etcd", "--data-dir=/f/n1/var/lib/etcd", "--initial-cluster-state=new",
		"--cert-file=/f/n1/etc/kubernetes/pki/etcd/server.crt", "--name=lab-n1"}
	if got := floorArgv(argv, "/var/lib/kcore-lab/n1", "/f/n1"); !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestParseAgentEvent(t *testing.T) {
	tests := []struct {
		line string
		ev   string
		at   string
		ok   bool
	}{
		{`time=2026-11-30T00:01:08.693Z level=INFO msg="start unit" component=supervisor unit=kcore-kube-controller-manager inputHash=6b3a`,
			"unit kcore-kube-controller-manager", "2026-11-30T00:01:08.693Z", true},
		{`time=2026-11-30T00:01:14.662Z level=INFO msg="run task" component=apply task=kcore-kubernetes-addons inputHash=8083`,
			"task kcore-kubernetes-addons", "2026-11-30T00:01:14.662Z", true},
		{`time=2026-11-30T00:01:08.694Z level=INFO msg="started unit" component=apply unit=kcore-kube-controller-manager`, "", "", false},
		{`garbage`, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.ev, func(t *testing.T) {
			ev, at, ok := parseAgentEvent(tt.line)
			if ok != tt.ok || ev != tt.ev {
				t.Fatalf("got %q %v, want %q %v", ev, ok, tt.ev, tt.ok)
			}
			if ok && at.Format(time.RFC3339Nano) != tt.at {
				t.Fatalf("time %s, want %s", at.Format(time.RFC3339Nano), tt.at)
			}
		})
	}
}

func TestNextEvent(t *testing.T) {
	evs := map[string]time.Duration{"a": time.Second, "b": 3 * time.Second, "c": 2 * time.Second}
	tests := []struct {
		at   time.Duration
		want time.Duration
		ok   bool
	}{
		{0, time.Second, true},
		{time.Second, 2 * time.Second, true},
		{3 * time.Second, 0, false},
	}
	for _, tt := range tests {
		got, ok := nextEvent(evs, tt.at)
		if got != tt.want || ok != tt.ok {
			t.Errorf("nextEvent(%s) = %s %v, want %s %v", tt.at, got, ok, tt.want, tt.ok)
		}
	}
}

// TestAgentDefault reads a flag's default from cilium-agent --help.
func TestAgentDefault(t *testing.T) {
	help := "Flags:\n      --l2-announcements-lease-duration duration                  Duration of inactivity after which a new leader is selected (default 15s)\n" +
		"      --l2-announcements-lease-duration-other duration   other (default 9s)\n      --l2-announcements-retry-period duration   Timeout (default 2s)\n      --no-default string   none\n"
	for key, want := range map[string]string{
		"l2-announcements-lease-duration": "15s",
		"l2-announcements-retry-period":   "2s",
		"no-default":                      "",
		"missing":                         "",
	} {
		if got := agentDefault(help, key); got != want {
			t.Errorf("agentDefault(%s) = %q, want %q", key, got, want)
		}
	}
}
