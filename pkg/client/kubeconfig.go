package client

import (
	"context"
	"net/http"

	"kcore.dev/kcore/pkg/apiv1"
)

// Kubeconfig asks for a kubeconfig of cluster for the caller, with a client
// certificate valid for ttl (a Go duration; "" for the controller's default).
func (c *Client) Kubeconfig(ctx context.Context, cluster, ttl string) (apiv1.KubeconfigResponse, error) {
	var out apiv1.KubeconfigResponse
	req := request{method: http.MethodPost, path: apiv1.KubeconfigPath(cluster)}
	if _, err := c.call(ctx, req, apiv1.KubeconfigRequest{TTL: ttl}, &out); err != nil {
		return apiv1.KubeconfigResponse{}, err
	}
	return out, nil
}
