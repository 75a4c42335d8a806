package buildcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const preprocessPath = "github.com/peregrine-mon/peregrine/internal/preprocess"

// valueFuncs are package preprocess's functions that turn a value's text
// into what is stored: conversion and the steps. Calling them is the
// pipeline's job (its one way in: acceptance, Prepare, Submit), so that
// no way in can convert a value itself and skip an item's steps and
// dependent items, as the SNMP trap receiver once did.
var valueFuncs = []string{"Convert", "Run", "Compile", "Trace"}

// valueFuncUsers are the files outside package preprocess allowed to
// call valueFuncs, with why.
var valueFuncUsers = map[string]string{
	"internal/pipeline/preproc.go": "the pipeline's intake and shards",
	// preprocessing.test (the frontend's "Test" button) runs steps on a
	// value the user typed and stores nothing.
	"internal/api/preprocessing.go": "preprocessing.test",
}

// oneWayViolations returns "file:line: preprocess.X" for every use of a
// valueFunc in src (the file's source, named rel) that valueFuncUsers
// does not allow.
func oneWayViolations(fset *token.FileSet, rel string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	name := ""
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == preprocessPath {
			name = "preprocess"
			if im.Name != nil {
				name = im.Name.Name
			}
		}
	}
	if name == "" || name == "_" {
		return nil, nil
	}
	if _, ok := valueFuncUsers[rel]; ok {
		return nil, nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && slices.Contains(valueFuncs, sel.Sel.Name) {
			out = append(out, fset.Position(sel.Pos()).String()+": preprocess."+sel.Sel.Name)
		}
		return true
	})
	return out, nil
}

// TestOneWayIntoThePipeline fails when code outside the pipeline
// converts or preprocesses a value itself instead of going through
// pipeline.Prepare and Submit.
func TestOneWayIntoThePipeline(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	var bad []string
	err := walkGoFiles(root, false, func(path, rel string) error {
		if strings.HasPrefix(rel, "internal/preprocess/") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		v, err := oneWayViolations(fset, rel, src)
		bad = append(bad, v...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: values enter the pipeline one way: find the item with pipeline.ItemByKey/ItemByID, then pipeline.Prepare and Submit (see internal/pipeline/doc.go), rather than converting or preprocessing here", b)
	}
	for rel := range valueFuncUsers {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Errorf("valueFuncUsers names %s, which is gone: update the list", rel)
		}
	}
}

// TestOneWayCheckerCatchesAViolation plants a receiver that converts a
// value itself (the SNMP trap receiver's old bug) and checks that the
// rule reports it, so the rule cannot rot into a test that passes on
// everything.
func TestOneWayCheckerCatchesAViolation(t *testing.T) {
	const planted = `package snmptrap

import pp "github.com/peregrine-mon/peregrine/internal/preprocess"

func handle(it *Item, text []byte, s *Sample) error {
	return pp.Convert(it.ValueType, text, s)
}
`
	fset := token.NewFileSet()
	got, err := oneWayViolations(fset, "internal/ingest/snmptrap/receiver.go", planted)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.HasSuffix(got[0], "receiver.go:6:9: preprocess.Convert") {
		t.Fatalf("planted violation reported as %q; want one at receiver.go:6:9", got)
	}
	// The same call in the pipeline is its job.
	if got, _ := oneWayViolations(fset, "internal/pipeline/preproc.go", planted); len(got) != 0 {
		t.Fatalf("the pipeline's own call reported: %q", got)
	}
}
