package catalog

import (
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/zbx/units"
)

// ValueText is an item's value v as the Zabbix 6.0 server writes it into
// a text ({ITEM.VALUE} in a problem name, a tag, an alert): through the
// item's value map, "Up (1)", else a numeric value with its units
// ("1.4 GB", "1h 2m 5s": package zbx/units), else v. With unitsInMapped
// the mapped value's parentheses hold it with its units ("Up (1 B)"), as
// 6.0 writes operational data. Recorded from 6.0.14: trigger/opdata.go
// has the table. loc is the zone of "unixtime" values.
func (s *Snapshot) ValueText(it *Item, v string, unitsInMapped bool, loc *time.Location) string {
	shown := v
	if it.Units != "" && (it.ValueType == history.Float || it.ValueType == history.Uint) {
		shown = units.Format(v, it.Units, loc)
	}
	if it.ValueMapID != 0 {
		if vm := s.ValueMap(it.ValueMapID); vm != nil {
			if mapped, ok := vm.Map(v); ok {
				if unitsInMapped {
					return mapped + " (" + shown + ")"
				}
				return mapped + " (" + v + ")"
			}
		}
	}
	return shown
}
