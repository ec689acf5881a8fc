package chaos

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// absent is the register state of a key that does not exist. Every write's
// value is non-empty and unique, so a value names the write that made it.
const absent = ""

// unresolved prefixes the expected state of a CAS whose index no recorded
// operation names; no key ever holds such a value, so the CAS cannot hold.
const unresolved = "?index-"

// input is one operation as the model steps it.
type input struct {
	kind  Kind
	key   string
	value string
	// cas says the write is conditional on the key holding expect.
	cas    bool
	expect string
}

// output is what the operation returned.
type output struct {
	outcome  Outcome
	conflict bool
	notFound bool
	found    bool
	got      string
}

// kvModel is a per-key register with CAS: porcupine partitions the
// history by key and steps each key's value (absent when deleted).
func kvModel() porcupine.Model {
	return porcupine.Model{
		Partition: partitionByKey,
		Init:      func() any { return absent },
		Step: func(state, in, out any) (bool, any) {
			return step(state.(string), in.(input), out.(output))
		},
		DescribeOperation: describeOp,
		DescribeState: func(state any) string {
			if state.(string) == absent {
				return "(absent)"
			}
			return state.(string)
		},
	}
}

func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	var keys []string
	byKey := map[string][]porcupine.Operation{}
	for _, op := range history {
		k := op.Input.(input).key
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], op)
	}
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

// step applies one operation to a key holding state. An unknown write is
// taken as applied: porcupine may order it after every other operation
// (its return is past the history's end), which is the same as never
// applying it.
func step(state string, in input, out output) (bool, string) {
	holds := !in.cas || state == in.expect
	switch in.kind {
	case KindRead:
		if out.found != (state != absent) || out.got != state {
			return false, state
		}
		return true, state
	case KindPut, KindCAS:
		switch {
		case out.outcome == Unknown:
			if holds {
				return true, in.value
			}
			return true, state
		case out.outcome == OK:
			return holds, in.value
		case out.conflict:
			return !holds, state
		}
	case KindDelete:
		switch {
		case out.outcome == Unknown:
			if holds {
				return true, absent
			}
			return true, state
		case out.outcome == OK:
			return state != absent && holds, absent
		case out.notFound:
			return state == absent, state
		case out.conflict:
			return state != absent && !holds, state
		}
	}
	return false, state
}

func describeOp(in, out any) string {
	i, o := in.(input), out.(output)
	cond := ""
	if i.cas {
		cond = fmt.Sprintf(" if %q", i.expect)
	}
	res := string(o.outcome)
	switch {
	case o.conflict:
		res = "conflict"
	case o.notFound:
		res = "not found"
	case i.kind == KindRead && !o.found:
		res = "absent"
	case i.kind == KindRead:
		res = fmt.Sprintf("%q", o.got)
	}
	switch i.kind {
	case KindRead:
		return fmt.Sprintf("read(%s) -> %s", i.key, res)
	case KindDelete:
		return fmt.Sprintf("delete(%s%s) -> %s", i.key, cond, res)
	default:
		return fmt.Sprintf("%s(%s, %q%s) -> %s", i.kind, i.key, i.value, cond, res)
	}
}
