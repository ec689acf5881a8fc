package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// ReadOptions shape a GET.
type ReadOptions struct {
	// Index makes the GET a blocking query: it returns once the result
	// changes past Index (or Wait passes). Zero answers at once.
	Index uint64
	// Wait caps a blocking query; zero lets the server use its default.
	// Values above apiv1.MaxWait are capped by the server.
	Wait time.Duration
	// Stale lets any replica answer from its local state instead of a
	// leader-confirmed read.
	Stale bool
}

func (o ReadOptions) query() url.Values {
	q := url.Values{}
	if o.Index > 0 {
		q.Set(apiv1.ParamIndex, strconv.FormatUint(o.Index, 10))
		if o.Wait > 0 {
			q.Set(apiv1.ParamWait, o.Wait.String())
		}
	}
	if o.Stale {
		q.Set(apiv1.ParamStale, "true")
	}
	return q
}

// extra is how long beyond the client's timeout a read may take.
func (o ReadOptions) extra() time.Duration {
	if o.Index == 0 {
		return 0
	}
	if o.Wait <= 0 || o.Wait > apiv1.MaxWait {
		return apiv1.MaxWait
	}
	return o.Wait
}

// objectPath escapes kind and name for /v1/objects/{kind}/{name}. A name may
// contain slashes (NodeState "<cluster>/<node>"); each segment is escaped.
func objectPath(kind, name string) string {
	return apiv1.ObjectPath(url.PathEscape(kind), escapeSegments(name))
}

func escapeSegments(s string) string {
	u := url.URL{Path: s}
	return u.EscapedPath()
}

// Get returns the object (kind, name), leader-confirmed.
func (c *Client) Get(ctx context.Context, kind, name string) (apiv1.Object, error) {
	obj, _, err := c.GetWith(ctx, kind, name, ReadOptions{})
	return obj, err
}

// GetWith returns the object (kind, name) and the index the answer is at;
// with opts.Index set it blocks until the object changes past that index.
// Pass the returned index to the next call to watch the object.
func (c *Client) GetWith(ctx context.Context, kind, name string, opts ReadOptions) (apiv1.Object, uint64, error) {
	var obj apiv1.Object
	idx, err := c.call(ctx, request{method: http.MethodGet, path: objectPath(kind, name), query: opts.query(), extra: opts.extra()}, nil, &obj)
	if err != nil {
		return apiv1.Object{}, 0, err
	}
	if idx == 0 {
		idx = obj.ModifyIndex
	}
	return obj, idx, nil
}

// List returns every object of kind, leader-confirmed.
func (c *Client) List(ctx context.Context, kind string) (apiv1.List, error) {
	l, _, err := c.ListWith(ctx, kind, ReadOptions{})
	return l, err
}

// ListWith lists kind and returns the index the answer is at; with
// opts.Index set it blocks until the kind changes past that index.
func (c *Client) ListWith(ctx context.Context, kind string, opts ReadOptions) (apiv1.List, uint64, error) {
	var l apiv1.List
	idx, err := c.call(ctx, request{method: http.MethodGet, path: objectPath(kind, ""), query: opts.query(), extra: opts.extra()}, nil, &l)
	if err != nil {
		return apiv1.List{}, 0, err
	}
	if idx == 0 {
		idx = l.Index
	}
	return l, idx, nil
}

// Put stores obj as (kind, name) and returns the raft index it was applied
// at. obj is encoded as JSON, except json.RawMessage and []byte which are
// sent as they are. With cas set the write only happens when the object's
// ModifyIndex equals *cas (0: the object must not exist yet); otherwise it
// fails with ErrConflict. The write carries a request id that every retry
// reuses, so it is applied at most once even when an answer is lost in a
// leader change; a retry gets the first attempt's answer.
func (c *Client) Put(ctx context.Context, kind, name string, obj any, cas *uint64) (uint64, error) {
	return c.put(ctx, request{method: http.MethodPut, path: objectPath(kind, name), query: casQuery(cas), once: true}, obj)
}

// UpdateAction moves the stored ClusterUpdate name through action (one of
// apiv1.UpdateActions) with POST /v1/updates/{name}/{action}: the
// controller makes the rollout transition and records it in the audit log
// under the action's name. With cas set the action only happens when the
// update's ModifyIndex still equals *cas, else it fails with ErrConflict;
// without, the controller acts on the update as stored when the call
// arrives (a write that commits while it makes the transition makes it
// read again, a few times at most). It fails with ErrConflict too when the
// update's phase does not allow the action. Like Put, the call carries a request id every retry reuses, so
// it is applied at most once.
func (c *Client) UpdateAction(ctx context.Context, name, action string, cas *uint64) (apiv1.UpdateActionResponse, error) {
	var out apiv1.UpdateActionResponse
	req := request{method: http.MethodPost, path: apiv1.UpdateActionPath(url.PathEscape(name), url.PathEscape(action)), query: casQuery(cas), once: true}
	if _, err := c.call(ctx, req, nil, &out); err != nil {
		return apiv1.UpdateActionResponse{}, err
	}
	return out, nil
}

func (c *Client) put(ctx context.Context, req request, obj any) (uint64, error) {
	var in any = obj
	switch b := obj.(type) {
	case json.RawMessage:
		req.body, in = b, nil
	case []byte:
		req.body, in = b, nil
	}
	var out apiv1.WriteResponse
	if _, err := c.call(ctx, req, in, &out); err != nil {
		return 0, err
	}
	return out.Index, nil
}

// Delete removes (kind, name) and returns the raft index it was applied at.
// cas works as for Put.
func (c *Client) Delete(ctx context.Context, kind, name string, cas *uint64) (uint64, error) {
	var out apiv1.WriteResponse
	if _, err := c.call(ctx, request{method: http.MethodDelete, path: objectPath(kind, name), query: casQuery(cas), once: true}, nil, &out); err != nil {
		return 0, err
	}
	return out.Index, nil
}

func casQuery(cas *uint64) url.Values {
	q := url.Values{}
	if cas != nil {
		q.Set(apiv1.ParamCAS, strconv.FormatUint(*cas, 10))
	}
	return q
}
