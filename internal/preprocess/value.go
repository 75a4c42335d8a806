package preprocess

// RawValue is one value of a request that names its item itself, as
// history.push (Zabbix 7.0's JSON ingest) does: by ItemID, or by Host and
// Key when ItemID is 0.
type RawValue struct {
	ItemID    uint64
	Host, Key string
	Value     []byte // the value's text, as a sender would send it
	Clock     int64  // Unix seconds; -1: the receive time
	NS        int64  // -1: absent
}

// Result is the outcome of one RawValue: the item it was stored for, or
// why it was refused, worded for the client.
type Result struct {
	ItemID uint64
	Err    string
}
