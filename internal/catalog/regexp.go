package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Global regular expressions (Zabbix 6.0: Administration → General →
// Regular expressions; the API's regexp.*): named lists of expressions
// that LLD filters and log items name as "@name". A string matches a
// global regular expression when it matches every one of its
// expressions.

// ExpressionType is how an Expression matches, with Zabbix 6.0's
// numbers.
type ExpressionType uint8

// Expression types.
const (
	ExprIncluded    ExpressionType = 0 // the string contains Expression
	ExprAnyIncluded ExpressionType = 1 // the string contains one of Expression's parts, split at Delimiter
	ExprNotIncluded ExpressionType = 2 // the string does not contain Expression
	ExprTrue        ExpressionType = 3 // the regular expression matches the string
	ExprFalse       ExpressionType = 4 // the regular expression does not match the string
)

// Expression is one expression of a global regular expression.
type Expression struct {
	Expression string         `json:"expression"`
	Type       ExpressionType `json:"expression_type"`
	// Delimiter splits an ExprAnyIncluded expression: ",", "." or "/".
	// The other types keep what they were given ("," unless told "").
	Delimiter     string `json:"exp_delimiter"`
	CaseSensitive bool   `json:"case_sensitive"`
}

// GlobalRegexp is a global regular expression. It MUST NOT be modified.
type GlobalRegexp struct {
	ID          uint64
	Name        string
	TestString  string
	Expressions []Expression
}

// Limits from the Zabbix 6.0 database schema (regexps.name,
// expressions.expression; test_string is a text column).
const (
	maxRegexpNameLen = 128
	maxRegexpExprLen = 255
	maxRegexpTestLen = 65535
	regexpDelimiters = ",./"
)

// regexpSchema holds the global regular expressions (schema version 17):
// one row per regular expression, its expressions as a JSON array
// (read and written whole, as value maps' mappings), and the five a
// fresh Zabbix 6.0.14 has, with its IDs and contents (recorded with
// regexp.get from the peer): the templates' discovery rules name them.
// AUTOINCREMENT then hands out 6 next, as 6.0's ids table does.
const regexpSchema = `
CREATE TABLE IF NOT EXISTS regexps (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	name        TEXT NOT NULL UNIQUE,
	test_string TEXT NOT NULL,
	expressions TEXT NOT NULL
);
INSERT OR IGNORE INTO regexps (id, name, test_string, expressions) VALUES
(1, 'File systems for discovery', 'ext3', '[{"expression":"^(btrfs|ext2|ext3|ext4|reiser|xfs|ffs|ufs|jfs|jfs2|vxfs|hfs|apfs|refs|ntfs|fat32|zfs)$","expression_type":3,"exp_delimiter":",","case_sensitive":false}]'),
(2, 'Network interfaces for discovery', 'eth0', '[{"expression":"^Software Loopback Interface","expression_type":4,"exp_delimiter":",","case_sensitive":true},{"expression":"^(In)?[Ll]oop[Bb]ack[0-9._]*$","expression_type":4,"exp_delimiter":",","case_sensitive":true},{"expression":"^NULL[0-9.]*$","expression_type":4,"exp_delimiter":",","case_sensitive":true},{"expression":"^[Ll]o[0-9.]*$","expression_type":4,"exp_delimiter":",","case_sensitive":true},{"expression":"^[Ss]ystem$","expression_type":4,"exp_delimiter":",","case_sensitive":true},{"expression":"^Nu[0-9.]*$","expression_type":4,"exp_delimiter":",","case_sensitive":true}]'),
(3, 'Storage devices for SNMP discovery', '/boot', '[{"expression":"^(Physical memory|Virtual memory|Memory buffers|Cached memory|Swap space)$","expression_type":4,"exp_delimiter":",","case_sensitive":true}]'),
(4, 'Windows service names for discovery', 'SysmonLog', '[{"expression":"^(MMCSS|gupdate|SysmonLog|clr_optimization_v2.0.50727_32|clr_optimization_v4.0.30319_32)$","expression_type":4,"exp_delimiter":",","case_sensitive":true}]'),
(5, 'Windows service startup states for discovery', 'automatic', '[{"expression":"^(automatic|automatic delayed)$","expression_type":3,"exp_delimiter":",","case_sensitive":true}]');
`

// migrateRegexps is the migration 16 → 17 (global regular
// expressions with 6.0's defaults), self-contained so that schema
// changes made in parallel renumber cleanly.
func migrateRegexps() string { return regexpSchema }

// Regexps returns the global regular expressions ascending by ID;
// shared and read-only.
func (s *Snapshot) Regexps() []GlobalRegexp { return s.regexps }

// Regexp returns the global regular expression with the ID, or nil.
func (s *Snapshot) Regexp(id uint64) *GlobalRegexp {
	i, ok := slices.BinarySearchFunc(s.regexps, id, func(r GlobalRegexp, id uint64) int { return cmp.Compare(r.ID, id) })
	if !ok {
		return nil
	}
	return &s.regexps[i]
}

// RegexpByName returns the global regular expression with the name (as
// "@name" names it, without the "@"), or nil.
func (s *Snapshot) RegexpByName(name string) *GlobalRegexp {
	for i := range s.regexps {
		if s.regexps[i].Name == name {
			return &s.regexps[i]
		}
	}
	return nil
}

// Match reports whether v matches every expression of r, each as
// Zabbix documents its type: a substring test for types 0-2 (with
// type 1 one of the delimited substrings is enough), a regular
// expression (Go's syntax, as everywhere in Peregrine) for 3 and 4;
// case-insensitive unless CaseSensitive.
func (r *GlobalRegexp) Match(v string) bool {
	for i := range r.Expressions {
		if !r.Expressions[i].Match(v) {
			return false
		}
	}
	return true
}

// Match reports whether v passes the expression.
func (x *Expression) Match(v string) bool {
	contains := func(s, sub string) bool {
		if x.CaseSensitive {
			return strings.Contains(s, sub)
		}
		return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
	}
	switch x.Type {
	case ExprIncluded:
		return contains(v, x.Expression)
	case ExprAnyIncluded:
		for part := range strings.SplitSeq(x.Expression, x.Delimiter) {
			if contains(v, part) {
				return true
			}
		}
		return false
	case ExprNotIncluded:
		return !contains(v, x.Expression)
	case ExprTrue, ExprFalse:
		re, err := x.compile()
		if err != nil {
			return false
		}
		return re.MatchString(v) == (x.Type == ExprTrue)
	}
	return false
}

// Check reports why a type 3 or 4 expression does not compile (nil for
// the other types).
func (x *Expression) Check() error {
	if x.Type != ExprTrue && x.Type != ExprFalse {
		return nil
	}
	_, err := x.compile()
	return err
}

func (x *Expression) compile() (*regexp.Regexp, error) {
	if x.CaseSensitive {
		return regexp.Compile(x.Expression)
	}
	return regexp.Compile("(?i)" + x.Expression)
}

// checkRegexp validates r, naming problems under p.
func checkRegexp(p string, r *GlobalRegexp, el *errList) {
	switch {
	case r.Name == "":
		el.addf(p+".name", "cannot be empty")
	default:
		if err := checkText(r.Name, maxRegexpNameLen); err != nil {
			el.add(p+".name", err)
		}
	}
	if err := checkText(r.TestString, maxRegexpTestLen); err != nil {
		el.add(p+".test_string", err)
	}
	if len(r.Expressions) == 0 {
		el.addf(p+".expressions", "a regular expression needs at least one expression")
	}
	seen := map[string]bool{}
	for i, x := range r.Expressions {
		f := p + ".expressions[" + strconv.Itoa(i) + "]"
		switch {
		case x.Type > ExprFalse:
			el.addf(f+".expression_type", "value must be one of 0 (included), 1 (any included), 2 (not included), 3 (TRUE), 4 (FALSE)")
			continue
		case x.Expression == "":
			el.addf(f+".expression", "cannot be empty")
		case utf8.RuneCountInString(x.Expression) > maxRegexpExprLen || !utf8.ValidString(x.Expression):
			el.addf(f+".expression", "value is too long (at most %d characters)", maxRegexpExprLen)
		case x.Type == ExprAnyIncluded && (len(x.Delimiter) != 1 || !strings.Contains(regexpDelimiters, x.Delimiter)):
			el.addf(f+".exp_delimiter", `value must be one of ",", ".", "/"`)
		case x.Delimiter != "" && (len(x.Delimiter) != 1 || !strings.Contains(regexpDelimiters, x.Delimiter)):
			el.addf(f+".exp_delimiter", `value must be empty or one of ",", ".", "/"`)
		case x.Type == ExprTrue || x.Type == ExprFalse:
			if _, err := x.compile(); err != nil {
				el.addf(f+".expression", "invalid regular expression: %v", err)
			}
		}
		k := strconv.Itoa(int(x.Type)) + "\x00" + x.Expression
		if seen[k] {
			el.addf(f, "expression %q of type %d is listed twice", x.Expression, x.Type)
		}
		seen[k] = true
	}
}

func encodeExpressions(xs []Expression) string {
	b, err := json.Marshal(xs)
	if err != nil {
		panic("BUG: expressions do not marshal: " + err.Error())
	}
	return string(b)
}

// loadRegexps reads every global regular expression, ascending by ID.
func loadRegexps(ctx context.Context, tx *sql.Tx) ([]GlobalRegexp, error) {
	var out []GlobalRegexp
	err := queryEach(ctx, tx, "SELECT id, name, test_string, expressions FROM regexps ORDER BY id", func(r *sql.Rows) error {
		var g GlobalRegexp
		var js string
		if err := r.Scan(&g.ID, &g.Name, &g.TestString, &js); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(js), &g.Expressions); err != nil {
			return fmt.Errorf("%w: regular expression %d: %v", ErrCorrupt, g.ID, err)
		}
		out = append(out, g)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load regular expressions: %w", err)
	}
	return out, nil
}

// RegexpUpdate changes the fields of global regular expression ID that
// are set.
type RegexpUpdate struct {
	ID          uint64
	Name        *string
	TestString  *string
	Expressions *[]Expression
}

// regexps is the Edit's copy of the global regular expressions, made on
// first use (they are few).
func (e *Edit) regexps() []GlobalRegexp {
	if e.rx == nil {
		e.rx = slices.Clone(e.old.regexps)
		if e.rx == nil {
			e.rx = []GlobalRegexp{}
		}
	}
	return e.rx
}

func (e *Edit) regexpIndex(id uint64) int {
	return slices.IndexFunc(e.regexps(), func(r GlobalRegexp) bool { return r.ID == id })
}

func (e *Edit) regexpNameTaken(name string, except uint64) bool {
	return slices.ContainsFunc(e.regexps(), func(r GlobalRegexp) bool { return r.Name == name && r.ID != except })
}

// CreateRegexps creates global regular expressions and returns their
// IDs in order. Names are unique.
func (e *Edit) CreateRegexps(rs []GlobalRegexp) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	for i := range rs {
		p := "regexps[" + strconv.Itoa(i) + "]"
		checkRegexp(p, &rs[i], &el)
		if e.regexpNameTaken(rs[i].Name, 0) || slices.ContainsFunc(rs[:i], func(o GlobalRegexp) bool { return o.Name == rs[i].Name }) {
			el.add(p+".name", &ConflictError{Kind: RegexpExists, Name: rs[i].Name})
		}
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	ids := make([]uint64, len(rs))
	for i := range rs {
		r := rs[i]
		r.Expressions = slices.Clone(r.Expressions)
		id, err := e.exec("INSERT INTO regexps (name, test_string, expressions) VALUES (?, ?, ?)", r.Name, r.TestString, encodeExpressions(r.Expressions))
		if err != nil {
			return nil, e.fail(fmt.Errorf("cannot insert regular expression %q: %w", r.Name, err))
		}
		r.ID, ids[i] = id, id
		e.rx = append(e.regexps(), r)
	}
	return ids, nil
}

// UpdateRegexps changes global regular expressions by ID.
func (e *Edit) UpdateRegexps(ups []RegexpUpdate) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	next := make([]GlobalRegexp, len(ups))
	ids := make([]uint64, len(ups))
	for i, u := range ups {
		p := "regexps[" + strconv.Itoa(i) + "]"
		ids[i] = u.ID
		j := e.regexpIndex(u.ID)
		if j < 0 {
			el.add(p+".id", notFound("regular expression", u.ID))
			continue
		}
		n := e.regexps()[j]
		if u.Name != nil {
			n.Name = *u.Name
		}
		if u.TestString != nil {
			n.TestString = *u.TestString
		}
		if u.Expressions != nil {
			n.Expressions = slices.Clone(*u.Expressions)
		}
		checkRegexp(p, &n, &el)
		if e.regexpNameTaken(n.Name, n.ID) || slices.ContainsFunc(next[:i], func(o GlobalRegexp) bool { return o.Name == n.Name && o.ID != n.ID }) {
			el.add(p+".name", &ConflictError{Kind: RegexpExists, Name: n.Name})
		}
		next[i] = n
	}
	dupIDs("regexps", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	for _, n := range next {
		if _, err := e.exec("UPDATE regexps SET name = ?, test_string = ?, expressions = ? WHERE id = ?", n.Name, n.TestString, encodeExpressions(n.Expressions), n.ID); err != nil {
			return e.fail(fmt.Errorf("cannot update regular expression %q: %w", n.Name, err))
		}
		e.regexps()[e.regexpIndex(n.ID)] = n
	}
	return nil
}

// DeleteRegexps deletes global regular expressions by ID.
func (e *Edit) DeleteRegexps(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i, id := range ids {
		if e.regexpIndex(id) < 0 {
			el.add("regexps["+strconv.Itoa(i)+"]", notFound("regular expression", id))
		}
	}
	dupIDs("regexps", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := e.exec("DELETE FROM regexps WHERE id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete regular expression %d: %w", id, err))
		}
		j := e.regexpIndex(id)
		e.rx = slices.Delete(e.regexps(), j, j+1)
	}
	return nil
}

// buildRegexps installs the Edit's regular expressions, if it changed
// any, into s.
func (e *Edit) buildRegexps(s *Snapshot) {
	if e.rx == nil {
		return
	}
	s.regexps = slices.Clone(e.rx)
	slices.SortFunc(s.regexps, func(a, b GlobalRegexp) int { return cmp.Compare(a.ID, b.ID) })
	if len(s.regexps) == 0 {
		s.regexps = nil
	}
}
