package sqlitedb

import "testing"

// TestTranslate: the SQLite forms the stores use, in PostgreSQL's
// dialect.
func TestTranslate(t *testing.T) {
	tables := map[string]*tableInfo{
		"hosts":      {cols: []string{"id", "host"}, pk: []string{"id"}, rowid: "id"},
		"host_proxy": {cols: []string{"host_id", "proxy_id"}, pk: []string{"host_id"}},
	}
	for _, tc := range []struct{ in, out string }{
		{"SELECT id FROM hosts WHERE host = ? AND name = '?'", "SELECT id FROM hosts WHERE host = $1 AND name = '?'"},
		{"DELETE FROM template_links WHERE owner_id = ?1 OR template_id = ?1", "DELETE FROM template_links WHERE owner_id = $1 OR template_id = $1"},
		{"INSERT INTO hosts (host) VALUES (?)", "INSERT INTO hosts (host) VALUES ($1) RETURNING id"},
		{"INSERT OR IGNORE INTO sqlite_sequence (name, seq) SELECT 'graphs', coalesce((SELECT max(id) FROM graphs), 0)",
			"INSERT INTO sqlite_sequence (name, seq) SELECT 'graphs', coalesce((SELECT max(id) FROM graphs), 0) ON CONFLICT DO NOTHING"},
		{"UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT max(id) FROM items), 0)) + ? WHERE name = 'items'",
			"UPDATE sqlite_sequence SET seq = greatest(seq, coalesce((SELECT max(id) FROM items), 0)) + $1 WHERE name = 'items'"},
		{"INSERT OR REPLACE INTO host_proxy (host_id, proxy_id) VALUES (?, ?)",
			"INSERT INTO host_proxy (host_id, proxy_id) VALUES ($1, $2) ON CONFLICT (host_id) DO UPDATE SET proxy_id = EXCLUDED.proxy_id"},
		// Quotes and nesting: a comma or a parenthesis in a literal
		// counts for nothing; min of one argument stays the aggregate.
		{"SELECT min(a, 'x,)', (b)), min(f(c, d)), ?2 FROM t WHERE n = ')?'",
			"SELECT least(a, 'x,)', (b)), min(f(c, d)), $2 FROM t WHERE n = ')?'"},
		{"SELECT max(\"a,b\") FROM t", "SELECT max(\"a,b\") FROM t"},
		{"DELETE FROM httpsteps WHERE httptest_id = ? AND id NOT IN (SELECT value FROM json_each(?))",
			"DELETE FROM httpsteps WHERE httptest_id = $1 AND id NOT IN (SELECT value::bigint FROM json_array_elements_text($2::json))"},
	} {
		got, err := translate(tc.in, tables)
		if err != nil || got.q != tc.out {
			t.Errorf("translate(%q)\n = %q, %v\nwant %q", tc.in, got.q, err, tc.out)
		}
	}
	if _, err := translate("INSERT OR REPLACE INTO nowhere VALUES (1)", tables); err == nil {
		t.Error("INSERT OR REPLACE into a table without a known key was accepted")
	}
}

// TestTranslateTable: an SQLite table as sqlite_schema keeps it (added
// columns after the constraints) in PostgreSQL's DDL.
func TestTranslateTable(t *testing.T) {
	tb, err := translateTable(`CREATE TABLE items (
	id         INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused, (really)
	host_id    INTEGER NOT NULL REFERENCES hosts (id),
	key_       TEXT NOT NULL,
	UNIQUE (host_id, key_)
, description TEXT NOT NULL DEFAULT '')`)
	if err != nil {
		t.Fatal(err)
	}
	want := "CREATE TABLE items (\n\tid bigint PRIMARY KEY,\n\thost_id bigint NOT NULL REFERENCES hosts (id),\n\tkey_ text NOT NULL,\n\tUNIQUE (host_id, key_),\n\tdescription text NOT NULL DEFAULT ''\n)"
	if tb.ddl != want || !tb.autoinc || tb.info.rowid != "id" {
		t.Fatalf("got %q (autoinc %v, rowid %q)\nwant %q", tb.ddl, tb.autoinc, tb.info.rowid, want)
	}
	tags, err := translateTable("CREATE TABLE host_tags (host_id INTEGER NOT NULL, tag TEXT NOT NULL)")
	if err != nil || tags.ddl != "CREATE TABLE host_tags (\n\thost_id bigint NOT NULL,\n\ttag text NOT NULL,\n\trowid bigint GENERATED ALWAYS AS IDENTITY\n)" {
		t.Fatalf("a table ordered by rowid: %q, %v", tags.ddl, err)
	}
	links, err := translateTable("CREATE TABLE l (a INTEGER NOT NULL, b INTEGER NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID")
	if err != nil || len(links.info.pk) != 2 || links.info.rowid != "" || links.ddl != "CREATE TABLE l (\n\ta bigint NOT NULL,\n\tb bigint NOT NULL,\n\tPRIMARY KEY (a, b)\n)" {
		t.Fatalf("WITHOUT ROWID: %q %+v, %v", links.ddl, links.info, err)
	}
}
