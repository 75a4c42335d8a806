package catalog

import (
	"strings"
	"testing"
	"unsafe"
)

func sameBytes(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestStrPoolShares(t *testing.T) {
	var p strPool
	buf := []byte("vfs.fs.size[/,pused]")
	a := p.get(string(buf))
	buf[0] = 'X' // a request's buffer reused: the pooled string must not alias it
	b := p.get("vfs.fs.size[/,pused]")
	if a != "vfs.fs.size[/,pused]" || !sameBytes(a, b) {
		t.Fatalf("got %q and %q, shared %v", a, b, sameBytes(a, b))
	}
	long := strings.Repeat("x", maxPooledLen+1)
	if c := p.get(long); c != long || len(p.m) != 1 {
		t.Fatalf("a long string was pooled (%d entries)", len(p.m))
	}
	for i := range maxPoolEntries + 1 {
		p.get(string(rune('a'+i%26)) + strings.Repeat("y", i%7) + string(rune(i)))
	}
	if len(p.m) > maxPoolEntries {
		t.Fatalf("pool holds %d strings, bound %d", len(p.m), maxPoolEntries)
	}
}

func TestShareStrings(t *testing.T) {
	src := &LLDRule{Lifetime: "30d", ItemPrototypes: []ItemPrototype{{UUID: "u1", Item: ItemSpec{Key: "vfs.fs.size[{#FSNAME},pused]", Name: "FS {#FSNAME}"}}}}
	dst := cloneLLD(src)
	dst.ItemPrototypes[0].Item.Name = "changed"
	shareStrings(dst, src)
	dp, sp := dst.ItemPrototypes[0].Item, src.ItemPrototypes[0].Item
	if !sameBytes(dp.Key, sp.Key) || !sameBytes(dst.ItemPrototypes[0].UUID, src.ItemPrototypes[0].UUID) || !sameBytes(dst.Lifetime, src.Lifetime) {
		t.Fatal("equal strings were not shared")
	}
	if dp.Name != "changed" || sp.Name != "FS {#FSNAME}" {
		t.Fatalf("a different string was touched: %q, %q", dp.Name, sp.Name)
	}
}

func TestCompactKeepsValues(t *testing.T) {
	src := &LLDRule{Lifetime: "30d", ItemPrototypes: []ItemPrototype{{UUID: "u1", Item: ItemSpec{Key: "k[{#A}]"}}}}
	c := cloneLLD(src)
	if cap(c.ItemPrototypes) != 1 || !c.equal(src) {
		t.Fatalf("cap %d, equal %v", cap(c.ItemPrototypes), c.equal(src))
	}
	var p strPool
	want := p.get("30d")
	compact(c, p.get)
	if !sameBytes(c.Lifetime, want) || !c.equal(src) {
		t.Fatal("strings were not pooled, or the rule changed")
	}
}

func TestTagListsShared(t *testing.T) {
	e := &Edit{pool: &strPool{}}
	a := e.tags([]Tag{{Tag: "component", Value: "storage"}, {Tag: "fs", Value: "/"}})
	b := e.tags([]Tag{{Tag: "component", Value: "storage"}, {Tag: "fs", Value: "/"}})
	c := e.tags([]Tag{{Tag: "component", Value: "storage"}, {Tag: "fs", Value: "/boot"}})
	d := e.tags([]Tag{{Tag: "component:", Value: "storage"}})
	if &a[0] != &b[0] || cap(a) != len(a) {
		t.Fatal("equal lists not shared, or shared with room to append into")
	}
	if &a[0] == &c[0] || c[1].Value != "/boot" || d[0].Tag != "component:" || len(d) != 1 {
		t.Fatalf("different lists mixed up: %v %v", c, d)
	}
	if e.tags(nil) != nil {
		t.Fatal("an empty list must stay nil")
	}
}

// An import document's keys and names repeat on every host: normalize
// holds each once, as Open's interner does, and never aliases the
// document's own strings.
func TestNormalizeSharesKeys(t *testing.T) {
	sp := genSpec(3, 4)
	sp.Hosts[1].Items[2].Name = "Free space"
	sp.Hosts[2].Items[2].Name = "Free " + "space"
	ns, err := sp.normalize(true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns.hosts) != 3 {
		t.Fatalf("%d hosts", len(ns.hosts))
	}
	a, b, c := ns.hosts[0].items, ns.hosts[1].items, ns.hosts[2].items
	for i := range a {
		if a[i].Key != c[i].Key || !sameBytes(a[i].Key, c[i].Key) {
			t.Errorf("item %d: keys %q and %q not shared", i, a[i].Key, c[i].Key)
		}
		if sameBytes(a[i].Key, sp.Hosts[0].Items[i].Key) {
			t.Errorf("item %d: key aliases the document's", i)
		}
	}
	if b[2].Name != "Free space" || !sameBytes(b[2].Name, c[2].Name) {
		t.Errorf("names %q and %q not shared", b[2].Name, c[2].Name)
	}
}
