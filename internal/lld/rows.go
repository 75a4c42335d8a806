package lld

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/preprocess/jsonpath"
)

// Row is one discovered entity: its LLD macros and their values.
type Row struct {
	Macros map[string]string
	raw    string // the row's JSON, for macro paths
}

// maxRows bounds the rows of one value (Zabbix has no bound; a value
// of a million rows would create a million items).
const maxRows = 100000

// ParseRows reads a rule's value as Zabbix 6.0 does: a JSON array of
// objects, or an object whose "data" member is one. The errors are 6.0's
// texts (recorded from 6.0.14).
func ParseRows(value string, paths []catalog.LLDMacroPath) ([]Row, error) {
	v := strings.TrimSpace(value)
	if v == "" || (v[0] != '{' && v[0] != '[') {
		return nil, zerrf("Invalid discovery rule value: cannot parse as a valid JSON object: invalid object format, expected opening character '{' or '[' at: '%s'", short(value))
	}
	var arr []json.RawMessage
	if v[0] == '{' {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(v), &obj); err != nil {
			return nil, zerrf("Invalid discovery rule value: cannot parse as a valid JSON object: %v", err)
		}
		d, ok := obj["data"]
		if !ok || len(bytes.TrimSpace(d)) == 0 || bytes.TrimSpace(d)[0] != '[' {
			return nil, zabbixError(`Cannot find the "data" array in the received JSON object.`)
		}
		if err := json.Unmarshal(d, &arr); err != nil {
			return nil, zerrf("Invalid discovery rule value: cannot parse as a valid JSON object: %v", err)
		}
	} else if err := json.Unmarshal([]byte(v), &arr); err != nil {
		return nil, zerrf("Invalid discovery rule value: cannot parse as a valid JSON object: %v", err)
	}
	if len(arr) > maxRows {
		return nil, fmt.Errorf("discovery rule value has %d rows, more than the limit of %d", len(arr), maxRows)
	}
	compiled := make([]*jsonpath.Path, len(paths))
	for i, p := range paths {
		c, err := jsonpath.Compile(p.Path)
		if err != nil {
			return nil, zerrf("Cannot process LLD macro %s: %v", p.Macro, err)
		}
		compiled[i] = c
	}
	rows := make([]Row, 0, len(arr))
	for _, raw := range arr {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			continue // Zabbix skips rows that are not objects
		}
		r := Row{Macros: map[string]string{}, raw: string(raw)}
		for k, val := range m {
			if strings.HasPrefix(k, "{#") && strings.HasSuffix(k, "}") {
				r.Macros[k] = scalar(val)
			}
		}
		for i, p := range paths {
			if s, ok := compiled[i].Find(r.raw); ok {
				r.Macros[p.Macro] = s
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// scalar is a JSON value as LLD macro text: strings unquoted, others as
// written.
func scalar(v json.RawMessage) string {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return s
	}
	return string(bytes.TrimSpace(v))
}

func short(s string) string {
	if len(s) > 64 {
		return s[:64]
	}
	return s
}

// zabbixError is an error in Zabbix 6.0's words (a capital, a full
// stop), shown as the rule's error as Zabbix shows it.
type zabbixError string

func (e zabbixError) Error() string { return string(e) }

func zerrf(format string, args ...any) error { return zabbixError(fmt.Sprintf(format, args...)) }
