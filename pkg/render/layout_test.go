package render

import (
	"errors"
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// sharingIterations is how many random sets of clusters the generative
// test renders side by side.
const sharingIterations = 150

// randomCluster is a valid cluster named name on a random subset of six
// machines: one to three control planes, up to two workers, HA or not, API
// port 6443 or another (bridge).
func randomCluster(t *testing.T, rng *rand.Rand, name string, index int) *api.KubernetesCluster {
	t.Helper()
	ids := rng.Perm(6)
	cps := 1 + rng.Intn(3)
	workers := rng.Intn(3)
	c := &api.KubernetesCluster{Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: name}}
	s := &c.Spec
	s.ClusterCIDR = fmt.Sprintf("10.%d.0.0/16", 100+index)
	s.ServiceCIDR = fmt.Sprintf("10.%d.0.0/16", 200+index)
	s.ClusterDNS = fmt.Sprintf("10.%d.0.10", 200+index)
	port := 6443
	if rng.Intn(2) == 1 || index > 0 {
		port = 6444 + index
	}
	addr := func(i int) string { return fmt.Sprintf("192.168.40.%d", 101+i) }
	for i := 0; i < cps; i++ {
		s.ControlPlaneNodes = append(s.ControlPlaneNodes, api.ClusterNode{NodeID: fmt.Sprintf("node-%d", ids[i]), AdvertiseAddress: addr(ids[i])})
	}
	for i := cps; i < cps+workers && i < len(ids); i++ {
		s.WorkerNodes = append(s.WorkerNodes, api.ClusterNode{NodeID: fmt.Sprintf("node-%d", ids[i]), AdvertiseAddress: addr(ids[i])})
	}
	host := addr(ids[0])
	if rng.Intn(2) == 1 {
		s.HighAvailability = api.HASpec{Enabled: true, VIPAddress: fmt.Sprintf("192.168.40.%d", 200+index), VIPInterface: "enp6s0"}
		host = s.HighAvailability.VIPAddress
	}
	s.APIServerEndpoint = fmt.Sprintf("%s:%d", host, port)
	s.ScheduleOnControlPlane = len(s.WorkerNodes) == 0 || rng.Intn(2) == 1
	c.Default()
	if errs := c.Validate().Errors(); len(errs) > 0 {
		t.Fatalf("random cluster %s is invalid: %v", name, errs)
	}
	return c
}

// claimPatterns find what a render takes on its machine in file contents
// and argv.
type claimPatterns struct {
	table, routerID, instance, health, listen, hostPort *regexp.Regexp
}

func newClaimPatterns() claimPatterns {
	return claimPatterns{
		table:    regexp.MustCompile(`table inet (\S+)`),
		routerID: regexp.MustCompile(`virtual_router_id (\d+)`),
		instance: regexp.MustCompile(`vrrp_instance (\S+)`),
		health:   regexp.MustCompile(`(?m)^(?:healthzPort: |healthzBindAddress: 127\.0\.0\.1:)(\d+)$`),
		listen:   regexp.MustCompile(`^--(?:listen-[a-z-]+-urls|secure-port|root-dir|data-dir|pid|vrrp_pid)=(.*)$`),
		hostPort: regexp.MustCompile(`:(\d+)$`),
	}
}

// claims are what one node's render takes on its machine, by category.
func (cp claimPatterns) claims(ns *api.NodeState) map[string][]string {
	out := map[string][]string{}
	add := func(kind string, v ...string) { out[kind] = append(out[kind], v...) }
	for _, f := range ns.Files {
		add("path", f.Path)
		for _, m := range cp.table.FindAllStringSubmatch(f.Content, -1) {
			add("nft table", m[1])
		}
		for _, m := range cp.routerID.FindAllStringSubmatch(f.Content, -1) {
			add("router id", m[1])
		}
		for _, m := range cp.instance.FindAllStringSubmatch(f.Content, -1) {
			add("vrrp instance", m[1])
		}
		for _, m := range cp.health.FindAllStringSubmatch(f.Content, -1) {
			add("port", m[1])
		}
	}
	listen, hostPort := cp.listen, cp.hostPort
	for _, u := range ns.Units {
		add("unit", u.Name)
		for _, a := range u.Argv {
			m := listen.FindStringSubmatch(a)
			if m == nil {
				continue
			}
			for _, v := range strings.Split(m[1], ",") {
				if p := hostPort.FindStringSubmatch(v); p != nil {
					add("port", p[1])
				} else if strings.HasPrefix(v, "/") {
					add("path", v)
				} else {
					add("port", v)
				}
			}
		}
	}
	for _, tk := range ns.Tasks {
		add("unit", tk.Name)
	}
	for _, v := range ns.Volumes {
		add("volume", v.Name)
		add("path", v.MountPath)
	}
	return out
}

// TestClustersSharingMachinesClaimNothingTwice renders random pairs and
// triples of clusters placed on shared machines one after the other (Place,
// as a create records it) and checks that on every machine no two
// clusters' renders share a file path, unit or task name, port, nftables
// table, VRRP instance or router id, and that the first cluster on its
// machines renders byte for byte as it does alone.
func TestClustersSharingMachinesClaimNothingTwice(t *testing.T) {
	rng := rand.New(rand.NewSource(20261201))
	cp := newClaimPatterns()
	for it := 0; it < sharingIterations; it++ {
		n := 2 + rng.Intn(2)
		var placed []*api.KubernetesCluster
		var others []Occupant
		for i := 0; i < n; i++ {
			c := randomCluster(t, rng, fmt.Sprintf("c%d", i), i)
			slot, shared, err := Place(c, others, nil)
			if err != nil {
				t.Fatalf("iteration %d: place %s: %v", it, c.Metadata.Name, err)
			}
			c.Status.Slot, c.Status.Shared = slot, shared
			placed = append(placed, c)
			others = append(others, OccupantOf(c))
		}
		owner := map[string]string{} // node|kind|value -> cluster
		for _, c := range placed {
			out, err := Render(c, fakeSecrets(c), nil, Options{})
			if err != nil {
				t.Fatalf("iteration %d: render %s: %v", it, c.Metadata.Name, err)
			}
			for node, ns := range out {
				for kind, vals := range cp.claims(ns) {
					for _, v := range vals {
						key := node + "|" + kind + "|" + v
						if prev, ok := owner[key]; ok && prev != c.Metadata.Name {
							t.Fatalf("iteration %d: %s and %s both claim %s %s on %s (slots %v)", it, prev, c.Metadata.Name, kind, v, node, slotsOf(placed))
						}
						owner[key] = c.Metadata.Name
					}
				}
			}
		}
		first := placed[0]
		if first.Status.Slot != PrimarySlot || len(first.Status.Shared) != 0 {
			t.Fatalf("iteration %d: the first cluster got slot %d, shared %v", it, first.Status.Slot, first.Status.Shared)
		}
		alone := *first
		alone.Status = api.ClusterStatus{}
		want, err := Render(&alone, fakeSecrets(first), nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Render(first, fakeSecrets(first), nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for node := range want {
			if Hash(want[node]) != Hash(got[node]) {
				t.Fatalf("iteration %d: the primary's render on %s differs from its render alone", it, node)
			}
		}
	}
}

func slotsOf(cs []*api.KubernetesCluster) map[string]int {
	out := map[string]int{}
	for _, c := range cs {
		out[c.Metadata.Name] = c.Status.Slot
	}
	return out
}

func TestPlaceKeepsTheSlotOfAStoredCluster(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	a := randomCluster(t, rng, "a", 0)
	b := randomCluster(t, rng, "b", 1)
	b.Spec.ControlPlaneNodes[0].NodeID = a.Spec.ControlPlaneNodes[0].NodeID
	b.Spec.ControlPlaneNodes[0].AdvertiseAddress = a.Spec.ControlPlaneNodes[0].AdvertiseAddress
	// b was created first on these machines: a created later cannot take
	// slot 0 from it, and b keeps slot 0 and its kubelets on every update.
	b.Status.Slot = PrimarySlot
	slot, shared, err := Place(a, []Occupant{OccupantOf(b)}, nil)
	if err != nil || slot != 1 || !strings.Contains(strings.Join(shared, ","), a.Spec.ControlPlaneNodes[0].NodeID) {
		t.Fatalf("place a after b: slot %d shared %v err %v", slot, shared, err)
	}
	a.Status.Slot, a.Status.Shared = slot, shared
	slot, shared, err = Place(b, []Occupant{OccupantOf(a)}, b)
	if err != nil || slot != PrimarySlot || len(shared) != 0 {
		t.Fatalf("place stored b: slot %d shared %v err %v", slot, shared, err)
	}
}

func TestPlaceRefusesPastMaxSlots(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	var others []Occupant
	for i := 0; i <= MaxSlots; i++ {
		c := randomCluster(t, rng, fmt.Sprintf("c%d", i), 0)
		c.Spec.ControlPlaneNodes = c.Spec.ControlPlaneNodes[:1]
		c.Spec.ControlPlaneNodes[0] = api.ClusterNode{NodeID: "node-0", AdvertiseAddress: "192.168.40.101", Iface: "enp6s0"}
		slot, _, err := Place(c, others, nil)
		if i == MaxSlots {
			if !errors.Is(err, ErrNoSlot) {
				t.Fatalf("cluster %d of one machine: slot %d err %v, want ErrNoSlot", i, slot, err)
			}
			return
		}
		if err != nil || slot != i {
			t.Fatalf("cluster %d: slot %d err %v", i, slot, err)
		}
		if _, err := LayoutFor(c.Metadata.Name, slot); err != nil {
			t.Fatal(err)
		}
		others = append(others, Occupant{Name: c.Metadata.Name, Slot: slot, Nodes: []string{"node-0"}})
	}
}

func TestLayoutForRefusesSlotsOutOfRange(t *testing.T) {
	for _, s := range []int{-1, MaxSlots} {
		if _, err := LayoutFor("x", s); !errors.Is(err, ErrInvalid) {
			t.Fatalf("slot %d: %v", s, err)
		}
	}
	if _, err := LayoutFor("x", MaxSlots-1); err != nil {
		t.Fatal(err)
	}
}
