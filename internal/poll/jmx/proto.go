package jmx

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// Request is one "java gateway jmx" request: the keys of items that share
// an endpoint and credentials (Zabbix 6.0's grouping), with the user and
// host macros already resolved.
type Request struct {
	Username, Password string
	Endpoint           string
	Keys               []string
}

// AppendRequest appends r's JSON payload to dst, members as the Zabbix
// 6.0.14 server writes them (testdata/wire/batch-req.bin): request,
// username and password only when set, jmx_endpoint, keys. No "conn" or
// "port": the 6.0 gateway reads the endpoint alone.
func AppendRequest(dst []byte, r *Request) []byte {
	dst = append(dst, `{"request":"java gateway jmx"`...)
	if r.Username != "" || r.Password != "" {
		dst = append(dst, `,"username":`...)
		dst = appendString(dst, r.Username)
		dst = append(dst, `,"password":`...)
		dst = appendString(dst, r.Password)
	}
	dst = append(dst, `,"jmx_endpoint":`...)
	dst = appendString(dst, r.Endpoint)
	dst = append(dst, `,"keys":[`...)
	for i, k := range r.Keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
	}
	return append(dst, "]}"...)
}

// appendString appends s as a JSON string: quotes, backslashes and
// control characters escaped, "/" as the server writes it (unescaped),
// invalid UTF-8 replaced by U+FFFD, the rest as is. Not fastjson's
// writer: it quotes special characters the Go way (\x01), which is not
// JSON.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// Answer is the gateway's answer for one key: a value, or the reason
// it has none (its text as Zabbix shows it, e.g. "Attribute not found:
// No such attribute: HeapMemoryUsage22").
type Answer struct {
	// Value is the value's bytes (the JSON string unescaped), a window
	// of the Reply's buffer; nil when Error is set.
	Value    []byte
	Error    string
	HasValue bool
}

// Reply is a decoded gateway reply.
type Reply struct {
	// Failed is set when the gateway answered "failed" for the whole
	// request (the JVM unreachable, a bad request); Error says why.
	Failed bool
	Error  string
	// Answers holds one answer per key, in the keys' order, for a
	// "success" reply.
	Answers []Answer
	// buf holds the values; it is never reused once handed out, so the
	// answers' values stay valid for the results that carry them.
	buf []byte
}

// ErrBadReply marks a reply that is not the gateway's: not JSON, no
// "response", a "success" without one answer per key.
var ErrBadReply = errors.New("not a Java gateway reply")

// DecodeReply decodes payload, the reply to a request of keys keys, into
// r with p (which r does not keep). The values are copied into one new
// buffer per reply: they outlive p and belong to the results.
func DecodeReply(p *fastjson.Parser, payload []byte, keys int, r *Reply) error {
	*r = Reply{Answers: r.Answers[:0]}
	v, err := p.ParseBytes(payload)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadReply, err)
	}
	if v.Type() != fastjson.TypeObject {
		return fmt.Errorf("%w: a JSON %s, not an object", ErrBadReply, v.Type())
	}
	switch resp := string(v.GetStringBytes("response")); resp {
	case "success":
	case "failed":
		r.Failed, r.Error = true, string(v.GetStringBytes("error"))
		if r.Error == "" {
			r.Error = "the Java gateway answered \"failed\" without saying why"
		}
		return nil
	case "":
		return fmt.Errorf("%w: no \"response\" member", ErrBadReply)
	default:
		return fmt.Errorf("%w: response %q, want \"success\" or \"failed\"", ErrBadReply, clip(resp))
	}
	data := v.GetArray("data")
	if len(data) != keys {
		return fmt.Errorf("%w: %d answers to %d keys", ErrBadReply, len(data), keys)
	}
	size := 0
	for _, d := range data {
		size += len(d.GetStringBytes("value"))
	}
	r.buf = make([]byte, 0, size)
	for i, d := range data {
		var a Answer
		switch val := d.Get("value"); {
		case val != nil && val.Type() == fastjson.TypeString:
			s, _ := val.StringBytes()
			start := len(r.buf)
			r.buf = append(r.buf, s...)
			a.Value, a.HasValue = r.buf[start:len(r.buf):len(r.buf)], true
		case val != nil:
			return fmt.Errorf("%w: answer %d: the value is a JSON %s, not a string", ErrBadReply, i+1, val.Type())
		default:
			a.Error = string(d.GetStringBytes("error"))
			if a.Error == "" {
				a.Error = "the Java gateway sent neither a value nor an error for this key"
			}
		}
		r.Answers = append(r.Answers, a)
	}
	return nil
}

// clip shortens a peer's text quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
