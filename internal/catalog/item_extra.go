package catalog

// The rarely used part of an Item (issue 30: the heap per item). Most
// items of an estate are agent, SNMP or dependent items made from
// templates: they leave every field of ItemExtra empty, and an Item
// without one is 200 bytes smaller.

// noExtra is what Ext returns for an item without an ItemExtra. Nothing
// writes it (TestNoExtraStaysZero).
var noExtra ItemExtra

// Ext returns the item's rarely used fields, never nil. The result MUST
// NOT be modified: it may be shared with other items and snapshots (or
// be the shared empty one); MutExt gives one to write.
func (a *Item) Ext() *ItemExtra {
	if a.Extra == nil {
		return &noExtra
	}
	return a.Extra
}

// MutExt gives a a copy of its ItemExtra of its own (a new empty one if
// it had none) and returns it to be written: copy on write, since an
// ItemExtra may be shared with the item a was copied from. Writers that
// set several fields may call it for each.
func (a *Item) MutExt() *ItemExtra {
	x := new(ItemExtra)
	if a.Extra != nil {
		*x = *a.Extra
	}
	a.Extra = x
	return x
}

// isZero reports whether every field of x is empty.
func (x *ItemExtra) isZero() bool {
	return x.Description == "" && x.Timeout == "" && x.SNMPOID == "" && x.Params == "" && x.TimestampPrecision == "" &&
		x.HTTP == nil && x.Login == nil && x.JMX == nil && x.ODBC == nil && len(x.Parameters) == 0 &&
		x.RetryDelay == "" && x.IPMISensor == "" && x.LogTimeFmt == "" && x.UUID == "" && x.LLD == nil && x.Traps == nil
}

// same reports whether a and b hold the same configuration.
func (a *ItemExtra) same(b *ItemExtra) bool {
	if a == b {
		return true
	}
	return a.Description == b.Description && a.Timeout == b.Timeout && a.SNMPOID == b.SNMPOID && a.Params == b.Params &&
		a.TimestampPrecision == b.TimestampPrecision && a.RetryDelay == b.RetryDelay &&
		a.HTTP.equal(b.HTTP) && a.Login.equal(b.Login) && a.JMX.equal(b.JMX) && a.ODBC.equal(b.ODBC) &&
		sameItemParams(a.Parameters, b.Parameters) && a.IPMISensor == b.IPMISensor &&
		a.LogTimeFmt == b.LogTimeFmt && a.UUID == b.UUID && a.LLD.equal(b.LLD) && a.Traps.equal(b.Traps)
}

// trimExtra drops it's ItemExtra when every field is empty, so that the
// writers may set fields through MutExt without checking for "".
func (it *Item) trimExtra() {
	if it.Extra != nil && it.Extra.isZero() {
		it.Extra = nil
	}
}

// extraKey is the part of an ItemExtra the items table holds: the
// scalar fields, set on many items alike (an SNMP item's OID and
// timeout on every host of its template).
type extraKey struct {
	description, timeout, snmpOID, params, precision, retryDelay, ipmiSensor, logTimeFmt, uuid string
}

// extra returns an ItemExtra equal to x shared with every other item
// loaded with the same one, when x has only scalar fields (a later
// load step that adds the per-type settings copies it, MutExt), else x
// itself copied.
func (in *interner) extra(x *ItemExtra) *ItemExtra {
	if x.HTTP != nil || x.Login != nil || x.JMX != nil || x.ODBC != nil || x.Parameters != nil || x.LLD != nil || x.Traps != nil || x.UUID != "" {
		c := *x
		return &c
	}
	k := extraKey{x.Description, x.Timeout, x.SNMPOID, x.Params, x.TimestampPrecision, x.RetryDelay, x.IPMISensor, x.LogTimeFmt, x.UUID}
	if v, ok := in.extras[k]; ok {
		return v
	}
	if in.extras == nil {
		in.extras = map[extraKey]*ItemExtra{}
	}
	c := *x
	in.extras[k] = &c
	return &c
}

// shareExtra drops it's ItemExtra when it is empty, and else, when it
// has only scalar fields and no UUID (an inherited copy's, a discovered
// item's), makes it the pool's equal one: the copies of one template
// item on every host hold one ItemExtra.
func (e *Edit) shareExtra(it *Item) {
	it.trimExtra()
	x := it.Extra
	if x == nil || x.HTTP != nil || x.Login != nil || x.JMX != nil || x.ODBC != nil || x.Parameters != nil || x.LLD != nil || x.Traps != nil || x.UUID != "" {
		return
	}
	if e.pool == nil {
		e.pool = &strPool{}
	}
	p := e.pool
	k := extraKey{x.Description, x.Timeout, x.SNMPOID, x.Params, x.TimestampPrecision, x.RetryDelay, x.IPMISensor, x.LogTimeFmt, ""}
	if len(k.description)+len(k.params)+len(k.snmpOID) > maxPooledLen {
		return
	}
	if v, ok := p.extras[k]; ok {
		it.Extra = v
		return
	}
	if p.extras == nil || len(p.extras) >= maxPoolEntries {
		p.extras = make(map[extraKey]*ItemExtra, 64)
	}
	c := &ItemExtra{Description: e.text(x.Description), Timeout: e.text(x.Timeout), SNMPOID: e.text(x.SNMPOID), Params: e.text(x.Params),
		TimestampPrecision: e.text(x.TimestampPrecision), RetryDelay: e.text(x.RetryDelay),
		IPMISensor: e.text(x.IPMISensor), LogTimeFmt: e.text(x.LogTimeFmt)}
	p.extras[extraKey{c.Description, c.Timeout, c.SNMPOID, c.Params, c.TimestampPrecision, c.RetryDelay, c.IPMISensor, c.LogTimeFmt, ""}] = c
	it.Extra = c
}
