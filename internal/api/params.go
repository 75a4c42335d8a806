package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// ids accepts what Zabbix clients send for id lists: a string, a number,
// or an array of either ("itemids": "23296", 23296, ["1","2"]).
type ids []uint64

func (v *ids) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var raw []json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return err
		}
		out := make(ids, 0, len(raw))
		for _, r := range raw {
			id, err := oneID(r)
			if err != nil {
				return err
			}
			out = append(out, id)
		}
		*v = out
		return nil
	}
	if string(b) == "null" {
		*v = nil
		return nil
	}
	id, err := oneID(b)
	if err != nil {
		return err
	}
	*v = ids{id}
	return nil
}

func oneID(b []byte) (uint64, error) {
	s := string(bytes.Trim(bytes.TrimSpace(b), `"`))
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an id", s)
	}
	return id, nil
}

// flexInt accepts a number or a numeric string ("time_from": "1700000000").
type flexInt struct {
	set bool
	v   int64
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(bytes.TrimSpace(b), `"`))
	if s == "null" || s == "" {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	f.set, f.v = true, v
	return nil
}

// stringList accepts a string or an array of strings ("sortfield",
// "output").
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var v []string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*l = v
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*l = stringList{s}
	return nil
}

// output is the "output" parameter: "extend" (or absent) means every
// field; a list selects fields.
type output struct {
	all    bool
	fields map[string]bool
}

func parseOutput(l stringList, defaultAll bool) output {
	if len(l) == 0 {
		return output{all: defaultAll}
	}
	if len(l) == 1 && (l[0] == "extend" || l[0] == "") {
		return output{all: l[0] == "extend"}
	}
	o := output{fields: map[string]bool{}}
	for _, f := range l {
		o.fields[f] = true
	}
	return o
}

func (o output) has(f string) bool { return o.all || o.fields[f] }
