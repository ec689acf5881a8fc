package cli

import (
	"context"
	"log/slog"
)

// PodDrainer stops and removes every pod sandbox of the CRI at endpoint,
// in bounded time. The node agent's binary passes one (WithPodDrain) so
// that only it links a CRI client.
type PodDrainer func(ctx context.Context, log *slog.Logger, endpoint string) error

// AgentOption configures NewAgent.
type AgentOption func(*agentFlags)

// WithPodDrain makes the agent drain the pods of a unit serving a CRI
// (api.Unit.CRIEndpoint) before it removes the unit for good; without it
// they are left running.
func WithPodDrain(d PodDrainer) AgentOption {
	return func(fl *agentFlags) { fl.drainPods = d }
}
