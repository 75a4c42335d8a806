package maintenance

import (
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// Active reports whether m is in effect at t, computed in loc.
func Active(m *catalog.Maintenance, t time.Time, loc *time.Location) bool {
	u := t.Unix()
	if u < m.ActiveSince || u >= m.ActiveTill {
		return false
	}
	for i := range m.Periods {
		if periodActive(m, &m.Periods[i], t.In(loc)) {
			return true
		}
	}
	return false
}

// civilDay numbers local dates so that consecutive dates differ by one
// whatever daylight saving does.
func civilDay(t time.Time) int64 {
	y, mo, d := t.Date()
	return time.Date(y, mo, d, 12, 0, 0, 0, time.UTC).Unix() / 86400
}

func periodActive(m *catalog.Maintenance, p *catalog.MaintenancePeriod, t time.Time) bool {
	u := t.Unix()
	if p.Type == catalog.PeriodOnce {
		return p.StartDate <= u && u < p.StartDate+p.Period
	}
	loc := t.Location()
	since := time.Unix(m.ActiveSince, 0).In(loc)
	sinceDay := civilDay(since)
	// Every local day whose period could still run at t: today and the
	// days before it by the period's length.
	back := int(p.Period/86400) + 1
	y, mo, d := t.Date()
	for k := 0; k <= back; k++ {
		day := time.Date(y, mo, d-k, 0, 0, 0, 0, loc)
		n := civilDay(day) - sinceDay
		if n < 0 {
			break
		}
		switch p.Type {
		case catalog.PeriodDaily:
			if n%int64(p.Every) != 0 {
				continue
			}
		case catalog.PeriodWeekly:
			bit := uint8(1) << ((int(day.Weekday()) + 6) % 7) // Monday is bit 0
			if p.DayOfWeek&bit == 0 {
				continue
			}
			// Weeks from the Monday of active_since's week.
			sinceMonday := sinceDay - int64((int(since.Weekday())+6)%7)
			dayMonday := civilDay(day) - int64((int(day.Weekday())+6)%7)
			if ((dayMonday-sinceMonday)/7)%int64(p.Every) != 0 {
				continue
			}
		default:
			continue
		}
		start := day.Add(time.Duration(p.StartTime) * time.Second).Unix()
		if start <= u && u < start+p.Period {
			return true
		}
	}
	return false
}

// tagsMatch applies m's tag conditions to a problem's tags.
func tagsMatch(m *catalog.Maintenance, tags []event.Tag) bool {
	if len(m.Tags) == 0 {
		return true
	}
	cond := func(c catalog.MaintenanceTag) bool {
		for _, t := range tags {
			if t.Tag != c.Tag {
				continue
			}
			if c.Operator == 0 && t.Value == c.Value || c.Operator == 2 && strings.Contains(t.Value, c.Value) {
				return true
			}
		}
		return false
	}
	if m.TagsEval == 2 {
		for _, c := range m.Tags {
			if cond(c) {
				return true
			}
		}
		return false
	}
	// And/or: conditions on one tag name are or-ed, names and-ed.
	names := map[string]bool{}
	for _, c := range m.Tags {
		if _, seen := names[c.Tag]; !seen {
			names[c.Tag] = false
		}
		if cond(c) {
			names[c.Tag] = true
		}
	}
	for _, ok := range names {
		if !ok {
			return false
		}
	}
	return true
}
