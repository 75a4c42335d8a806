// Package usermacro is Zabbix's user macros: the reference syntax
// ({$NAME}, {$NAME:context}, {$NAME:"quoted context"},
// {$NAME:regex:"pattern"}), definitions with their types, and
// resolution over definition levels.
//
// # What it owns
//
//   - ParseRef and ScanRef read one macro reference; the parser is the
//     one definitions (catalog, API) and expansions in text use, and it
//     is fuzzed. Names are A-Z, 0-9, '_' and '.'; an unquoted context
//     runs to the first '}', a quoted one may hold \" and spaces around
//     it are ignored, as in Zabbix. Ref.Key is the identity of a
//     definition: {$A:x} and {$A:"x"} are the same macro.
//   - Level holds one owner's definitions (a host's, a template's, the
//     global ones) indexed by name; Scope resolves a macro over levels
//     in Zabbix's order, which the caller builds: the host first, then
//     its templates level by level (first-level templates, then theirs,
//     ...), then global. Levels are shared between scopes, so a template
//     linked to many hosts costs one Level, and a lookup costs the
//     definitions of that name, not of the scope (BenchmarkScope: tens
//     of nanoseconds, no allocation). A
//     reference with a context is resolved, in order: a definition with
//     exactly that context, on the first level that has one; else one
//     whose regular expression matches the context, likewise; else the
//     macro without context. A "regex:" prefix in a reference (a trigger
//     expression) is a static context, as Zabbix reads it; only
//     definitions have regular expression contexts. Regular expressions
//     are compiled once, when the definition is made (NewDef), never per
//     lookup.
//   - Expand replaces the user macros in a text (item keys, URLs,
//     trigger names); undefined macros stay as written, as Zabbix leaves
//     them.
//   - Types: text (0), secret text (1) and vault secret (2). Secret
//     values resolve like text but callers never show them: the API
//     omits them and event names mask them (Def.Secret, Scope.Masked).
//
// # What it does not own
//
// Where definitions are stored and which levels a host has (package
// catalog builds the Scopes in its snapshot), built-in macros such as
// {HOST.HOST}, and low-level discovery macros.
//
// # Concurrency
//
// A Def and a Scope are immutable once made and may be used by any
// number of goroutines.
package usermacro
