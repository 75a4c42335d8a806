package sqlitedb

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The stores' statements are written for SQLite; on PostgreSQL each is
// rewritten once (and cached) into PostgreSQL's dialect:
//   - ? placeholders become $1, $2, ... (outside literals);
//   - INSERT OR IGNORE becomes INSERT ... ON CONFLICT DO NOTHING, and
//     INSERT OR REPLACE an upsert on the table's primary key;
//   - a scalar max() or min() of several arguments becomes greatest()
//     or least();
//   - instr() becomes strpos(), LIMIT -1 (none) LIMIT ALL;
//   - SELECT value FROM json_each(?) (a JSON array of IDs) becomes
//     json_array_elements_text;
//   - an INSERT into a table with a rowid alias (an INTEGER PRIMARY KEY)
//     gets RETURNING of that column, which is how the driver hands out
//     LastInsertId.
// Everything else is the same in both (the stores keep to the common
// subset: see docs/ha.md).

// tableInfo is what the rewriting needs of a table.
type tableInfo struct {
	cols  []string
	pk    []string
	rowid string // the INTEGER PRIMARY KEY column, "" for none
}

var (
	insertOr   = regexp.MustCompile(`(?is)^\s*INSERT\s+OR\s+(IGNORE|REPLACE)\s+INTO\s+`)
	insertInto = regexp.MustCompile(`(?is)^\s*INSERT\s+INTO\s+([A-Za-z_][A-Za-z0-9_]*)\s*(\(([^)]*)\))?`)
	returning  = regexp.MustCompile(`(?i)\bRETURNING\b`)
	jsonEach   = regexp.MustCompile(`(?i)SELECT\s+value\s+FROM\s+json_each\((\$\d+)\)`)
	minMax     = regexp.MustCompile(`(?i)\b(max|min)\(`)
	instr      = regexp.MustCompile(`(?i)\binstr\(`)
	noLimit    = regexp.MustCompile(`(?i)\bLIMIT\s+-1\b`)
)

// translated is one statement in PostgreSQL's dialect.
type translated struct {
	q string
	// returning is set when q ends in RETURNING of the table's rowid
	// alias: the driver runs it as a query and reports the last ID.
	returning bool
}

// translate rewrites q (see above) with the tables' metadata.
func translate(q string, tables map[string]*tableInfo) (translated, error) {
	var or string
	if m := insertOr.FindStringSubmatch(q); m != nil {
		or = strings.ToUpper(m[1])
		q = "INSERT INTO " + q[len(m[0]):]
	}
	q = placeholders(q)
	q = jsonEach.ReplaceAllString(q, "SELECT value::bigint FROM json_array_elements_text(${1}::json)")
	q = scalarMinMax(q)
	q = instr.ReplaceAllString(q, "strpos(")
	q = noLimit.ReplaceAllString(q, "LIMIT ALL")
	q = strings.TrimRight(strings.TrimSpace(q), ";")
	m := insertInto.FindStringSubmatch(q)
	if m == nil {
		if or != "" {
			return translated{}, fmt.Errorf("sqlitedb: cannot put %q in PostgreSQL's dialect: INSERT OR %s without a table", q, or)
		}
		return translated{q: q}, nil
	}
	t := tables[m[1]]
	switch or {
	case "IGNORE":
		q += " ON CONFLICT DO NOTHING"
	case "REPLACE":
		if t == nil || len(t.pk) == 0 || m[3] == "" {
			return translated{}, fmt.Errorf("sqlitedb: cannot put %q in PostgreSQL's dialect: INSERT OR REPLACE needs a column list and a table with a primary key", q)
		}
		var set []string
		for _, c := range strings.Split(m[3], ",") {
			c = strings.TrimSpace(c)
			if !contains(t.pk, c) {
				set = append(set, c+" = EXCLUDED."+c)
			}
		}
		q += " ON CONFLICT (" + strings.Join(t.pk, ", ") + ")"
		if len(set) == 0 {
			q += " DO NOTHING"
		} else {
			q += " DO UPDATE SET " + strings.Join(set, ", ")
		}
	}
	if t != nil && t.rowid != "" && !returning.MatchString(q) {
		return translated{q: q + " RETURNING " + t.rowid, returning: true}, nil
	}
	return translated{q: q}, nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// scanSQL walks s from index from, skipping quoted text ('...' and
// "..."), and calls fn at every other byte with the parenthesis depth
// before it (counted from from: a '(' raises it for the bytes after).
// fn returns how many bytes it consumed (at least one), or 0 to stop.
// The three rewrites below that must not look inside literals share it.
func scanSQL(s string, from int, fn func(i, depth int) int) {
	depth := 0
	var quote byte
	for i := from; i < len(s); {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			i++
			continue
		case c == '\'' || c == '"':
			quote = c
			i++
			continue
		}
		n := fn(i, depth)
		if n == 0 {
			return
		}
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		}
		i += n
	}
}

// placeholders numbers q's ? placeholders outside quotes.
func placeholders(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n, last := 0, 0
	scanSQL(q, 0, func(i, _ int) int {
		if q[i] != '?' {
			return 1
		}
		b.WriteString(q[last:i])
		// ?NNN is a numbered parameter; a bare ? is one more than the
		// highest so far, as in SQLite.
		j := i + 1
		for j < len(q) && q[j] >= '0' && q[j] <= '9' {
			j++
		}
		if j > i+1 {
			v, _ := strconv.Atoi(q[i+1 : j])
			n = max(n, v)
			b.WriteString("$" + q[i+1:j])
		} else {
			n++
			b.WriteString("$" + strconv.Itoa(n))
		}
		last = j
		return j - i
	})
	b.WriteString(q[last:])
	return b.String()
}

// scalarMinMax turns max(a, b) and min(a, b) (SQLite's scalar forms)
// into greatest and least; the aggregates (one argument) stay.
func scalarMinMax(q string) string {
	locs := minMax.FindAllStringSubmatchIndex(q, -1)
	if locs == nil {
		return q
	}
	out := q
	// From the last, so that earlier offsets stay valid.
	for i := len(locs) - 1; i >= 0; i-- {
		l := locs[i]
		comma := false
		scanSQL(out, l[1]-1, func(j, depth int) int {
			switch out[j] {
			case ')':
				if depth == 1 {
					return 0
				}
			case ',':
				comma = comma || depth == 1
			}
			return 1
		})
		if !comma {
			continue
		}
		name := "greatest"
		if strings.EqualFold(q[l[2]:l[3]], "min") {
			name = "least"
		}
		out = out[:l[2]] + name + out[l[3]:]
	}
	return out
}

var (
	createTable = regexp.MustCompile(`(?is)^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?("?[A-Za-z_][A-Za-z0-9_]*"?)\s*\((.*)\)\s*(WITHOUT\s+ROWID)?\s*;?\s*$`)
	colType     = regexp.MustCompile(`(?i)^(INTEGER|INT|TEXT|REAL|BLOB|NUMERIC|BOOLEAN)\b`)
	autoinc     = regexp.MustCompile(`(?i)\s+AUTOINCREMENT\b`)
	pkWords     = regexp.MustCompile(`(?i)\bPRIMARY\s+KEY\b`)
	tableCons   = regexp.MustCompile(`(?i)^(PRIMARY|UNIQUE|FOREIGN|CHECK|CONSTRAINT)\b`)
	tablePK     = regexp.MustCompile(`(?is)^PRIMARY\s+KEY\s*\(([^)]*)\)`)
	lineComment = regexp.MustCompile(`--[^\n]*`)
)

// pgTable is one SQLite CREATE TABLE put in PostgreSQL's dialect.
type pgTable struct {
	name    string
	ddl     string
	info    *tableInfo
	autoinc bool // AUTOINCREMENT: IDs never reused (the sqlite_sequence row)
}

// translateTable puts an SQLite CREATE TABLE (as sqlite_schema keeps it,
// added columns included) in PostgreSQL's dialect: INTEGER is bigint,
// REAL double precision, BLOB bytea; a rowid alias keeps SQLite's ID
// rules through a trigger (see pgRowidTrigger); a table with a rowid of
// its own (neither a rowid alias nor WITHOUT ROWID) gets a rowid column
// that numbers rows in insertion order, as statements that ORDER BY
// rowid expect.
func translateTable(sqlText string) (*pgTable, error) {
	m := createTable.FindStringSubmatch(lineComment.ReplaceAllString(sqlText, ""))
	if m == nil {
		return nil, fmt.Errorf("sqlitedb: cannot read table definition %q", sqlText)
	}
	t := &pgTable{name: strings.Trim(m[1], `"`), info: &tableInfo{}}
	var defs []string
	for _, el := range splitTop(m[2]) {
		el = strings.TrimSpace(el)
		if el == "" {
			continue
		}
		if tableCons.MatchString(el) {
			if pk := tablePK.FindStringSubmatch(el); pk != nil {
				for _, c := range strings.Split(pk[1], ",") {
					t.info.pk = append(t.info.pk, strings.TrimSpace(c))
				}
			}
			defs = append(defs, el)
			continue
		}
		name, rest, _ := strings.Cut(el, " ")
		name = strings.Trim(name, `"`)
		rest = strings.TrimSpace(rest)
		t.info.cols = append(t.info.cols, name)
		typ := colType.FindString(rest)
		pgType := "text"
		switch strings.ToUpper(typ) {
		case "INTEGER", "INT", "BOOLEAN":
			pgType = "bigint"
		case "REAL":
			pgType = "double precision"
		case "BLOB":
			pgType = "bytea"
		case "NUMERIC":
			pgType = "numeric"
		}
		rest = strings.TrimSpace(rest[len(typ):])
		if pkWords.MatchString(rest) {
			t.info.pk = append(t.info.pk, name)
			if strings.EqualFold(typ, "INTEGER") {
				t.info.rowid = name
				t.autoinc = autoinc.MatchString(rest)
				rest = autoinc.ReplaceAllString(rest, "")
			}
		}
		defs = append(defs, name+" "+pgType+" "+rest)
	}
	if t.info.rowid == "" && m[3] == "" {
		defs = append(defs, "rowid bigint GENERATED ALWAYS AS IDENTITY")
	}
	t.ddl = "CREATE TABLE " + t.name + " (\n\t" + strings.Join(defs, ",\n\t") + "\n)"
	return t, nil
}

// splitTop splits s at commas outside parentheses and quotes.
func splitTop(s string) []string {
	var out []string
	start := 0
	scanSQL(s, 0, func(i, depth int) int {
		if s[i] == ',' && depth == 0 {
			out = append(out, s[start:i])
			start = i + 1
		}
		return 1
	})
	return append(out, s[start:])
}

// pgRowidTrigger gives t's rowid alias SQLite's rules on PostgreSQL: a
// row inserted without an ID gets one more than the highest, and with
// AUTOINCREMENT one more than the highest ever handed out, kept in a
// sqlite_sequence table as SQLite keeps it (so that the stores' own
// statements on sqlite_sequence, reserving a range of IDs or choosing
// where a table's IDs start, mean the same); an explicit ID above the
// sequence moves it up.
func pgRowidTrigger(t *pgTable) string {
	n, c := t.name, t.info.rowid
	var body string
	if t.autoinc {
		body = `DECLARE s bigint;
BEGIN
	SELECT seq INTO s FROM sqlite_sequence WHERE name = '` + n + `' FOR UPDATE;
	IF NOT FOUND THEN
		SELECT coalesce(max(` + c + `), 0) INTO s FROM ` + n + `;
		INSERT INTO sqlite_sequence (name, seq) VALUES ('` + n + `', s);
	END IF;
	IF NEW.` + c + ` IS NULL THEN
		NEW.` + c + ` := s + 1;
	END IF;
	IF NEW.` + c + ` > s THEN
		UPDATE sqlite_sequence SET seq = NEW.` + c + ` WHERE name = '` + n + `';
	END IF;
	RETURN NEW;
END`
	} else {
		body = `BEGIN
	IF NEW.` + c + ` IS NULL THEN
		SELECT coalesce(max(` + c + `), 0) + 1 INTO NEW.` + c + ` FROM ` + n + `;
	END IF;
	RETURN NEW;
END`
	}
	return `CREATE FUNCTION ` + n + `_rowid() RETURNS trigger LANGUAGE plpgsql AS $fn$
` + body + `
$fn$;
CREATE TRIGGER ` + n + `_rowid BEFORE INSERT ON ` + n + ` FOR EACH ROW EXECUTE FUNCTION ` + n + `_rowid()`
}
