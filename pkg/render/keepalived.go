package render

import (
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// keepalived constants from the reference.
const (
	VRRPInstance      = "kcore_api"
	VRRPScript        = "kcore_api_health"
	VirtualRouterID   = 40
	DefaultPriority   = 100
	vrrpFirewallTable = "kcore_vrrp"
)

// VRRP timing. The VIP speaks VRRP version 3 (RFC 5798), whose
// advertisement interval is in centiseconds, so a backup takes the VIP
// Master_Down_Interval = 3 × VRRPAdvertInterval + Skew_Time (under a
// second) after the last advertisement, where version 2's whole seconds
// made it about 4 s: at bootstrap, the wait between the first API server
// turning healthy and the VIP, and at a failover, the wait for a holder
// that died. The VRRP process runs at the highest CPU priority
// (VRRPNice), so a busy node still sends its advertisements on time and its
// peers do not take the VIP from a live holder. Not real-time scheduling
// (vrrp_rt_priority): keepalived then caps the process's CPU time between
// two sleeps (RLIMIT_RTTIME), cannot raise the cap again on a reload, and
// the kernel killed the VRRP process of a holder reloading its peers.
const (
	// VRRPVersion is the VRRP version keepalived speaks.
	VRRPVersion = 3
	// VRRPAdvertInterval is advert_int: the time between advertisements.
	VRRPAdvertInterval = 250 * time.Millisecond
	// VRRPNice is keepalived's vrrp_priority, the VRRP process's nice value.
	VRRPNice = -20
)

// Two nodes can turn master at once (a starting keepalived and a running
// backup both hear the leaving holder's priority-0 advertisement); the
// lower one yields, but the neighbours may keep the MAC of whichever sent
// gratuitous ARPs last until the next set, which keepalived sends 5 s after
// the transition by default. The yielding master therefore advertises once
// more before it yields (vrrp_higher_prio_send_advert), so the winner, on
// hearing a lower priority, sends its gratuitous ARPs again at once, and
// every new master's second set comes VRRPGARPMasterDelaySeconds after its
// first.
const (
	// VRRPGARPMasterDelaySeconds is vrrp_garp_master_delay: the delay of a
	// new master's second set of gratuitous ARPs, in the whole seconds
	// keepalived takes (0 would mean no second set).
	VRRPGARPMasterDelaySeconds = 1
)

// Priority is the keepalived priority of a control plane: the last octet of
// its advertise address, or 100 when that octet is 0 or 255 (or the address
// is not IPv4).
func Priority(advertiseAddress string) int {
	ip := net.ParseIP(advertiseAddress).To4()
	if ip == nil || ip[3] == 0 || ip[3] == 255 {
		return DefaultPriority
	}
	return int(ip[3])
}

// The API health check keepalived runs on each control plane. A dead API
// server refuses at once, so it loses the VIP after HealthCheckFall checks
// HealthCheckInterval apart; a live but busy one has HealthCheckMaxTime to
// answer /readyz before a check counts as failed, so a loaded control plane
// does not hand the VIP away (which resets every connection through it).
const (
	// HealthCheckInterval is the time between two checks, in seconds.
	HealthCheckInterval = 1
	// HealthCheckMaxTime bounds one check's request (curl --max-time), in seconds.
	HealthCheckMaxTime = 3
	// HealthCheckTimeout is when keepalived gives up on a check, in seconds:
	// one second past the request's own bound.
	HealthCheckTimeout = HealthCheckMaxTime + 1
	// HealthCheckRise and HealthCheckFall are the checks in a row that
	// turn the node healthy and faulty. One passed check is enough to
	// turn healthy: with nopreempt a healthy backup takes the VIP only
	// when no node holds it (a new cluster, every API server down, a
	// holder handing it over), where a second check would only keep the
	// VIP away a second longer. A keepalived that starts counts its API
	// server down until a check passes (init_fail): otherwise it starts
	// healthy, and in a roll the node whose keepalived and API server
	// restart together could take the VIP before its API server answers.
	HealthCheckRise = 1
	HealthCheckFall = 2
)

// healthCommand is the script line keepalived runs to check the local API.
// curl is used rather than a kcore subcommand: keepalived executes the line
// itself (no shell), curl is on every host that runs Kubernetes, and -k is
// safe here because only 127.0.0.1 is contacted.
func (r *renderer) healthCommand() string {
	if r.opts.HealthCheckCommand != "" {
		return r.opts.HealthCheckCommand
	}
	return fmt.Sprintf("/usr/bin/curl -sfk --max-time %d -o /dev/null %s/readyz", HealthCheckMaxTime, r.localAPIURL())
}

// keepalived renders the VRRP instance that holds the API VIP and its unit.
// keepalived reads its configuration again on SIGHUP and keeps the state of
// the VRRP instances that are still configured (the VIP stays where it is):
// a change of the unicast peers alone (a scale, a replace), which reaches
// every control plane at once, reloads it rather than restarting it, since
// restarting all of them together would leave nobody holding the VIP for
// seconds. Every other change to the configuration (the VIP, its
// interface, the health check) is in the input hash and restarts it, one
// control plane at a time with the VIP handed over (the spec rollout).
func (r *renderer) keepalived(b *builder, m api.ClusterNode) error {
	conf, err := r.keepalivedConfig(m, r.unicastPeers(m))
	if err != nil {
		return err
	}
	restarts, err := r.keepalivedConfig(m, nil)
	if err != nil {
		return err
	}
	b.file(r.l.KeepalivedConfig, modeConfig, conf, false, r.keepalivedReason(m))
	b.unitRereading(api.Unit{
		Name:   r.l.UnitKeepalived,
		Reason: "keepalived holding the API VIP",
		Argv: []string{
			"keepalived",
			"--dont-fork",
			"--log-console",
			"--vrrp",
			"--use-file=" + r.l.KeepalivedConfig,
			"--pid=" + path.Join(r.opts.RunDir, r.l.KeepalivedPID),
			"--vrrp_pid=" + path.Join(r.opts.RunDir, r.l.KeepalivedVRRPPID),
		},
		Restart: api.RestartAlways,
	}, nil, []string{r.l.KeepalivedConfig}, "keepalived configuration but its unicast peers", restarts)
	return nil
}

// unicastPeers are the advertise addresses of the control planes other
// than m, in spec order: keepalived's unicast_peer list on m.
func (r *renderer) unicastPeers(m api.ClusterNode) []string {
	var peers []string
	for _, n := range r.c.Spec.ControlPlaneNodes {
		if n.NodeID != m.NodeID {
			peers = append(peers, n.AdvertiseAddress)
		}
	}
	return peers
}

// keepalivedConfig is keepalived.conf for control plane m: instance kcore_api,
// BACKUP with nopreempt, router id 40, VRRP version 3 advertisements every
// VRRPAdvertInterval, unicast to peers (the other control planes), the VIP
// as /24 on vipInterface, and (unless turned off) a track script that moves
// the VIP away from a node whose API is not ready.
func (r *renderer) keepalivedConfig(m api.ClusterNode, peers []string) (string, error) {
	ha := r.c.Spec.HighAvailability
	if net.ParseIP(ha.VIPAddress).To4() == nil || ha.VIPInterface == "" {
		return "", fmt.Errorf("render keepalived: vip %q on %q: %w", ha.VIPAddress, ha.VIPInterface, ErrInvalid)
	}
	var w strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&w, format+"\n", a...) }
	p("# keepalived for the API VIP of cluster %s on %s, rendered by kcore.", r.c.Metadata.Name, m.NodeID)
	p("global_defs {")
	p("    router_id %s", m.NodeID)
	p("    script_user root")
	p("    enable_script_security")
	p("    vrrp_version %d", VRRPVersion)
	p("    vrrp_priority %d", VRRPNice)
	p("    vrrp_garp_master_delay %d", VRRPGARPMasterDelaySeconds)
	p("    vrrp_higher_prio_send_advert")
	p("}")
	p("")
	check := ha.HealthCheckEnabled()
	if check {
		p("vrrp_script %s {", r.l.VRRPScript)
		p("    script \"%s\"", r.healthCommand())
		p("    interval %d", HealthCheckInterval)
		p("    timeout %d", HealthCheckTimeout)
		p("    rise %d", HealthCheckRise)
		p("    fall %d", HealthCheckFall)
		p("    init_fail")
		p("    weight 0")
		p("}")
		p("")
	}
	p("vrrp_instance %s {", r.l.VRRPInstance)
	p("    state BACKUP")
	p("    nopreempt")
	p("    interface %s", ha.VIPInterface)
	p("    virtual_router_id %d", r.l.VirtualRouterID)
	p("    priority %d", Priority(m.AdvertiseAddress))
	p("    advert_int %s", strconv.FormatFloat(VRRPAdvertInterval.Seconds(), 'f', -1, 64))
	p("    unicast_src_ip %s", m.AdvertiseAddress)
	p("    unicast_peer {")
	for _, addr := range peers {
		p("        %s", addr)
	}
	p("    }")
	p("    virtual_ipaddress {")
	p("        %s/24 dev %s", ha.VIPAddress, ha.VIPInterface)
	p("    }")
	if check {
		p("    track_script {")
		p("        %s", r.l.VRRPScript)
		p("    }")
	}
	p("}")
	return w.String(), nil
}

// firewall renders the nftables rules that accept VRRP (IP protocol 112) and
// exempt it from connection tracking, so masquerade never rewrites the
// advertisements, and the task that loads them. The file first creates, then
// deletes and recreates its own table, so loading it again is idempotent.
func (r *renderer) firewall(b *builder) error {
	rules := fmt.Sprintf(`# VRRP for the kcore API VIP, rendered by kcore: accept IP protocol 112 and
# mark it NOTRACK. Loading this file again replaces the table.
table inet %[1]s
delete table inet %[1]s
table inet %[1]s {
	chain raw_prerouting {
		type filter hook prerouting priority raw; policy accept;
		ip protocol vrrp notrack
	}
	chain raw_output {
		type filter hook output priority raw; policy accept;
		ip protocol vrrp notrack
	}
	chain input {
		type filter hook input priority filter - 1; policy accept;
		ip protocol vrrp accept
	}
}
`, r.l.FirewallTable)
	b.file(r.l.VRRPFirewall, modeConfig, rules, false, "nftables table "+r.l.FirewallTable+": accept VRRP (protocol 112) and mark it NOTRACK")
	b.task(api.Task{Name: r.l.TaskFirewallVRRP, Argv: []string{"nft", "-f", r.l.VRRPFirewall}, Reason: "load the VRRP firewall table"}, r.l.VRRPFirewall)
	return nil
}
