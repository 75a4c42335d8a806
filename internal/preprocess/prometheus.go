package preprocess

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// promSample is one sample line of the Prometheus text exposition
// format, with the HELP and TYPE of its metric family.
type promSample struct {
	name, value, line, help, typ string
	labels                       []promLabel
}

type promLabel struct{ name, value string }

func (s *promSample) label(name string) (string, bool) {
	if name == "__name__" {
		return s.name, true
	}
	for _, l := range s.labels {
		if l.name == name {
			return l.value, true
		}
	}
	return "", false
}

// parsePromText reads the text exposition format: "# HELP" and "# TYPE"
// lines, other comments (skipped) and sample lines
// name{label="value",...} value [timestamp]. The error names the line.
func parsePromText(text string) ([]promSample, error) {
	var (
		out  []promSample
		help = map[string]string{}
		typ  = map[string]string{}
	)
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if line[0] == '#' {
			f := strings.SplitN(line, " ", 4)
			if len(f) >= 3 && (f[1] == "HELP" || f[1] == "TYPE") {
				v := ""
				if len(f) == 4 {
					v = f[3]
				}
				if f[1] == "HELP" {
					help[f[2]] = strings.NewReplacer(`\\`, `\`, `\n`, "\n").Replace(v)
				} else {
					typ[f[2]] = v
				}
			}
			continue
		}
		s, err := parsePromLine(line)
		if err != nil {
			return nil, errors.New("cannot parse Prometheus data at line " + strconv.Itoa(n+1) + ": " + err.Error())
		}
		out = append(out, s)
	}
	// A family's HELP and TYPE name its base name; a histogram's or
	// summary's _bucket, _sum and _count samples belong to it.
	for i := range out {
		s := &out[i]
		base := s.name
		if _, ok := typ[base]; !ok {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(base, suf); ok {
					if _, ok := typ[b]; ok {
						base = b
					}
				}
			}
		}
		s.help, s.typ = help[base], typ[base]
	}
	return out, nil
}

func isNameChar(c byte, first bool) bool {
	return c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') || (!first && c >= '0' && c <= '9')
}

func parsePromLine(line string) (promSample, error) {
	s := promSample{line: line}
	i := 0
	for i < len(line) && isNameChar(line[i], i == 0) {
		i++
	}
	if i == 0 {
		return s, errors.New("invalid metric name")
	}
	s.name = line[:i]
	if i < len(line) && line[i] == '{' {
		labels, rest, err := parsePromLabels(line[i+1:], false)
		if err != nil {
			return s, err
		}
		s.labels = labels
		i = len(line) - len(rest)
	}
	f := strings.Fields(line[i:])
	if len(f) < 1 || len(f) > 2 {
		return s, errors.New("expected a value and an optional timestamp")
	}
	if _, err := strconv.ParseFloat(f[0], 64); err != nil {
		return s, errors.New("invalid value \"" + f[0] + "\"")
	}
	s.value = f[0]
	if len(f) == 2 {
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			return s, errors.New("invalid timestamp \"" + f[1] + "\"")
		}
	}
	return s, nil
}

// promMatcher is one label condition of a pattern: =, !=, =~ or !~.
type promMatcher struct {
	name, op, value string
	re              *regexp.Regexp
}

// parsePromLabels reads label pairs after '{' up to '}' and returns the
// text after '}'. With ops, the operators !=, =~ and !~ are accepted too
// (a pattern); a sample only has =.
func parsePromLabels(s string, ops bool) ([]promLabel, string, error) {
	ms, rest, err := parsePromMatchers(s, ops)
	labels := make([]promLabel, len(ms))
	for i, m := range ms {
		labels[i] = promLabel{m.name, m.value}
	}
	return labels, rest, err
}

func parsePromMatchers(s string, ops bool) ([]promMatcher, string, error) {
	var out []promMatcher
	for {
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, "}") {
			return out, s[1:], nil
		}
		i := 0
		for i < len(s) && isNameChar(s[i], i == 0) {
			i++
		}
		if i == 0 {
			return nil, "", errors.New("invalid label name")
		}
		m := promMatcher{name: s[:i]}
		s = strings.TrimLeft(s[i:], " \t")
		switch {
		case ops && (strings.HasPrefix(s, "!=") || strings.HasPrefix(s, "=~") || strings.HasPrefix(s, "!~")):
			m.op, s = s[:2], s[2:]
		case strings.HasPrefix(s, "="):
			m.op, s = "=", s[1:]
		default:
			return nil, "", errors.New("expected '=' after label \"" + m.name + "\"")
		}
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, `"`) {
			return nil, "", errors.New("expected a quoted value for label \"" + m.name + "\"")
		}
		var b strings.Builder
		j := 1
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' && j+1 < len(s) {
				j++
				if s[j] == 'n' {
					b.WriteByte('\n')
					continue
				}
			}
			b.WriteByte(s[j])
		}
		if j >= len(s) {
			return nil, "", errors.New("unterminated value of label \"" + m.name + "\"")
		}
		m.value, s = b.String(), strings.TrimLeft(s[j+1:], " \t")
		if m.op == "=~" || m.op == "!~" {
			re, err := regexp.Compile("^(?:" + m.value + ")$")
			if err != nil {
				return nil, "", errors.New("invalid regular expression for label \"" + m.name + "\": " + err.Error())
			}
			m.re = re
		}
		out = append(out, m)
		s = strings.TrimPrefix(s, ",")
	}
}

// promPattern is a Prometheus pattern step's first parameter: a metric
// name and/or label matchers, and an optional "== value" filter.
type promPattern struct {
	name     string
	matchers []promMatcher
	value    string // "": any
}

func parsePromPattern(p string) (*promPattern, error) {
	pat := &promPattern{}
	s := strings.TrimSpace(p)
	i := 0
	for i < len(s) && isNameChar(s[i], i == 0) {
		i++
	}
	pat.name, s = s[:i], strings.TrimSpace(s[i:])
	if strings.HasPrefix(s, "{") {
		ms, rest, err := parsePromMatchers(s[1:], true)
		if err != nil {
			return nil, errors.New("invalid Prometheus pattern \"" + p + "\": " + err.Error())
		}
		pat.matchers, s = ms, strings.TrimSpace(rest)
	}
	if v, ok := strings.CutPrefix(s, "=="); ok {
		pat.value = strings.TrimSpace(v)
		if _, err := strconv.ParseFloat(pat.value, 64); err != nil {
			return nil, errors.New("invalid Prometheus pattern \"" + p + "\": invalid value \"" + pat.value + "\"")
		}
		s = ""
	}
	if s != "" || (pat.name == "" && len(pat.matchers) == 0) {
		return nil, errors.New("invalid Prometheus pattern \"" + p + "\"")
	}
	return pat, nil
}

func (pat *promPattern) match(s *promSample) bool {
	if pat.name != "" && s.name != pat.name {
		return false
	}
	for _, m := range pat.matchers {
		v, _ := s.label(m.name)
		var ok bool
		switch m.op {
		case "=":
			ok = v == m.value
		case "!=":
			ok = v != m.value
		case "=~":
			ok = m.re.MatchString(v)
		default:
			ok = !m.re.MatchString(v)
		}
		if !ok {
			return false
		}
	}
	if pat.value != "" {
		a, _ := strconv.ParseFloat(s.value, 64)
		b, _ := strconv.ParseFloat(pat.value, 64)
		return a == b
	}
	return true
}

func (pat *promPattern) filter(text string) ([]promSample, error) {
	all, err := parsePromText(text)
	if err != nil {
		return nil, err
	}
	var out []promSample
	for i := range all {
		if pat.match(&all[i]) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// promPatternStep is "Prometheus pattern": the output is the one matching
// sample's value ("value"), its label p[2] ("label"), or p[2] of
// avg/min/max/sum/count over every matching sample ("function").
func promPatternStep(pat *promPattern, p []string, text string) (string, error) {
	ms, err := pat.filter(text)
	if err != nil {
		return "", stepErr(err.Error())
	}
	if p[1] == "function" {
		if p[2] == "count" {
			return strconv.Itoa(len(ms)), nil
		}
		if len(ms) == 0 {
			return "", stepErr("no data matches the specified Prometheus pattern")
		}
		acc := 0.0
		for i, s := range ms {
			v, _ := strconv.ParseFloat(s.value, 64)
			switch {
			case i == 0 && p[2] != "sum" && p[2] != "avg":
				acc = v
			case p[2] == "min":
				acc = min(acc, v)
			case p[2] == "max":
				acc = max(acc, v)
			default:
				acc += v
			}
		}
		if p[2] == "avg" {
			acc /= float64(len(ms))
		}
		return formatFloat(acc), nil
	}
	switch len(ms) {
	case 0:
		return "", stepErr("no data matches the specified Prometheus pattern")
	case 1:
	default:
		return "", stepErr("data extraction error: " + strconv.Itoa(len(ms)) + " metrics match the Prometheus pattern; use a function to aggregate them")
	}
	if p[1] == "label" {
		v, ok := ms[0].label(p[2])
		if !ok {
			return "", stepErr("the matching metric has no label \"" + p[2] + "\"")
		}
		return v, nil
	}
	return ms[0].value, nil
}

// promToJSON is "Prometheus to JSON": every matching sample as an object
// with name, value, line, labels, and help and type when known.
func promToJSON(pat *promPattern, text string) (string, error) {
	ms, err := pat.filter(text)
	if err != nil {
		return "", stepErr(err.Error())
	}
	b := []byte{'['}
	for i, s := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendJSONString(b, s.name)
		b = append(b, `,"value":`...)
		b = appendJSONString(b, s.value)
		b = append(b, `,"line":`...)
		b = appendJSONString(b, s.line)
		b = append(b, `,"labels":{`...)
		for j, l := range s.labels {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, l.name)
			b = append(b, ':')
			b = appendJSONString(b, l.value)
		}
		b = append(b, '}')
		if s.help != "" {
			b = append(b, `,"help":`...)
			b = appendJSONString(b, s.help)
		}
		if s.typ != "" {
			b = append(b, `,"type":`...)
			b = appendJSONString(b, s.typ)
		}
		b = append(b, '}')
	}
	return string(append(b, ']')), nil
}
