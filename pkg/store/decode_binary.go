package store

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errShort is the cause of a binary command that ends early or holds a
// length past its end.
var errShort = errors.New("truncated binary command")

// binReader reads the binary wire form; the first error sticks.
type binReader struct {
	b   []byte
	err error
}

func (r *binReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *binReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(errShort)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *binReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail(errShort)
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

// bytes returns the next n bytes, copied: decoded payloads outlive the
// log entry's buffer.
func (r *binReader) bytes(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail(errShort)
		return nil
	}
	v := make([]byte, n)
	copy(v, r.b)
	r.b = r.b[n:]
	return v
}

func (r *binReader) str() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail(errShort)
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *binReader) opt() []byte {
	n := r.uvarint()
	if r.err != nil || n == 0 {
		return nil
	}
	return r.bytes(n - 1)
}

func (r *binReader) index() *uint64 {
	switch r.byte() {
	case 0:
		return nil
	case 1:
		v := r.uvarint()
		return &v
	default:
		r.fail(errors.New("bad optional index marker"))
		return nil
	}
}

// shared returns the next n bytes as a slice of the entry itself, its
// capacity cut at its end so an append cannot reach the bytes after it.
func (r *binReader) shared(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail(errShort)
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// optShared is opt without the copy: see put.
func (r *binReader) optShared() []byte {
	n := r.uvarint()
	if r.err != nil || n == 0 {
		return nil
	}
	return r.shared(n - 1)
}

// put reads a Put whose data is a slice of the entry rather than a copy:
// the data is most of a put's entry and the state keeps it as long as the
// object lives, so a copy would only double what every replica allocates
// per write. Audit entries are copied (opt): the audit log keeps up to
// AuditRetain of them, long after their entry's put data is overwritten,
// and a shared one would keep that whole entry alive.
func (r *binReader) put() *Put {
	return &Put{Kind: r.str(), Name: r.str(), Data: r.optShared(), ExpectModifyIndex: r.index()}
}

func (r *binReader) delete() *Delete {
	return &Delete{Kind: r.str(), Name: r.str(), ExpectModifyIndex: r.index()}
}

func (r *binReader) batch() *Batch {
	n := r.uvarint()
	// Every op takes at least one byte, so a count past the bytes left is
	// malformed (and is not allocated).
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail(errShort)
		return nil
	}
	b := &Batch{}
	if n > 0 {
		b.Ops = make([]Op, n)
	}
	for i := range b.Ops {
		has := r.byte()
		if has&^(opHasPut|opHasDelete) != 0 {
			r.fail(fmt.Errorf("bad batch op kinds %#x", has))
			return nil
		}
		if has&opHasPut != 0 {
			b.Ops[i].Put = r.put()
		}
		if has&opHasDelete != 0 {
			b.Ops[i].Delete = r.delete()
		}
	}
	switch r.byte() {
	case 0:
	case 1:
		b.Audit = &AppendAudit{Entry: r.opt()}
	default:
		r.fail(errors.New("bad batch audit marker"))
	}
	return b
}

// decodeBinary parses the binary wire form (b[0] is wireBinary). A typed
// payload is decoded here, so Apply does not decode it again.
func decodeBinary(b []byte) (Command, error) {
	r := &binReader{b: b[1:]}
	schema := r.uvarint()
	flags := r.byte()
	c := Command{Type: r.str(), Time: r.str(), ID: r.str(), Caller: r.str(), RequestID: r.str()}
	if r.err == nil && (flags&^(flagIgnorable|flagTyped) != 0 || schema > uint64(maxSchema)) {
		r.fail(fmt.Errorf("bad flags %#x or schema %d", flags, schema))
	}
	c.Schema = int(schema)
	c.Ignorable = flags&flagIgnorable != 0
	if flags&flagTyped == 0 {
		c.Payload = r.opt()
	} else {
		switch c.Type {
		case TypePut:
			c.typed = r.put()
		case TypeDelete:
			c.typed = r.delete()
		case TypeBatch:
			c.typed = r.batch()
		case TypeAppendAudit:
			c.typed = &AppendAudit{Entry: r.opt()}
		default:
			r.fail(fmt.Errorf("typed payload of unknown type %q", c.Type))
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail(fmt.Errorf("%d bytes after the command", len(r.b)))
	}
	if r.err != nil {
		return Command{}, fmt.Errorf("decode command: %w: %w", ErrInvalid, r.err)
	}
	return c, nil
}

// maxSchema bounds the schema a binary command may carry, so it fits an
// int on every platform; Apply refuses anything newer than this build's.
const maxSchema = 1<<31 - 1
