package proccluster

import (
	"time"

	"kcore.dev/kcore/pkg/client"
)

// clientTimeout bounds one request of a Client to one replica.
const clientTimeout = 10 * time.Second

// ClientConfig returns a config for a client of role named name (its
// certificate's subject) that knows the replicas at addrs, or every
// replica in order when addrs is empty. It waits up to DefaultTimeout for
// an election.
func (c *Cluster) ClientConfig(role, name string, addrs ...string) client.Config {
	c.t.Helper()
	if len(addrs) == 0 {
		for _, r := range c.Replicas() {
			addrs = append(addrs, r.API)
		}
	}
	cfg, err := c.auth.ClientConfig(addrs, role, name)
	if err != nil {
		c.t.Fatal(err)
	}
	cfg.Timeout = clientTimeout
	cfg.ElectionWait = DefaultTimeout
	return cfg
}

// NewClient returns a client for cfg, closed when the test ends.
func (c *Cluster) NewClient(cfg client.Config) *client.Client {
	c.t.Helper()
	cl, err := client.New(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

// Client returns a client of role, named after it, for every replica.
func (c *Cluster) Client(role string) *client.Client {
	c.t.Helper()
	return c.NewClient(c.ClientConfig(role, "proccluster-"+role))
}

// ReplicaClient returns a client of role that talks to replica i alone,
// e.g. for stale reads of that replica's own state.
func (c *Cluster) ReplicaClient(i int, role string) *client.Client {
	c.t.Helper()
	r := c.Replica(i)
	return c.NewClient(c.ClientConfig(role, "proccluster-"+role, r.API))
}
