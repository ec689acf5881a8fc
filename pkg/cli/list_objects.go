package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/apiv1"
)

// listed is one stored object of a list, decoded into T.
type listed[T any] struct {
	obj apiv1.Object
	val T
}

// listObjects lists every stored object of kind through the current context's
// controller and decodes each into T.
func listObjects[T any](cmd *cobra.Command, kind string) ([]listed[T], error) {
	c, _, err := ctlClient(cmd)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	l, err := c.List(cmdContext(cmd), kind)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", kind, err)
	}
	out := make([]listed[T], 0, len(l.Items))
	for _, o := range l.Items {
		var v T
		if err := json.Unmarshal(o.Data, &v); err != nil {
			return nil, fmt.Errorf("decode %s %s: %w", kind, o.Name, err)
		}
		out = append(out, listed[T]{obj: o, val: v})
	}
	return out, nil
}

// values returns the decoded objects of a list, in its order, for -o json
// and yaml.
func values[T any](items []listed[T]) []T {
	out := make([]T, 0, len(items))
	for _, it := range items {
		out = append(out, it.val)
	}
	return out
}
