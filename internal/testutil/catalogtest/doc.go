// Package catalogtest opens catalogs for other packages' tests: a fresh
// SQLite catalog in the test's temporary directory with a Spec applied,
// closed when the test ends.
//
// What it owns: only the setup that api, ingest, server and cmd tests
// used to copy (open in a temp dir, apply, close). It does not build
// specs; each test states its own hosts and items. The catalogs parse
// trigger expressions with trigger.ItemRefs, as the server's do, so a
// Spec may hold triggers.
//
// The catalog package's own tests cannot use it (catalogtest imports
// catalog); they keep their openTemp helper.
//
// It sits under testutil, not under catalog, because it imports a stage
// (trigger): a package in the catalog's tree must not (docs/layout.md).
//
// Concurrency: each call works on its own file; the returned Catalog has
// the catalog package's contract.
package catalogtest
