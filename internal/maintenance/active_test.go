package maintenance

import (
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

func TestActive(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Riga")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	at := func(s string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	// 2026-11-23 is a Monday.
	since, till := at("2026-11-23 00:00").Unix(), at("2027-01-01 00:00").Unix()
	daily := catalog.Maintenance{ActiveSince: since, ActiveTill: till, Periods: []catalog.MaintenancePeriod{
		{Type: catalog.PeriodDaily, Every: 2, StartTime: 23 * 3600, Period: 2 * 3600}}} // 23:00-01:00 every other day
	weekly := catalog.Maintenance{ActiveSince: since, ActiveTill: till, Periods: []catalog.MaintenancePeriod{
		{Type: catalog.PeriodWeekly, Every: 2, DayOfWeek: 1 | 16, StartTime: 9 * 3600, Period: 3600}}} // Mon and Fri 09:00-10:00, every other week
	once := catalog.Maintenance{ActiveSince: since, ActiveTill: till, Periods: []catalog.MaintenancePeriod{
		{Type: catalog.PeriodOnce, StartDate: at("2026-12-01 10:00").Unix(), Period: 1800}}}
	bounded := daily
	bounded.ActiveTill = at("2026-11-23 23:30").Unix()
	for _, c := range []struct {
		name string
		m    *catalog.Maintenance
		at   string
		want bool
	}{
		{"daily first day start", &daily, "2026-11-23 23:00", true},
		{"daily before start", &daily, "2026-11-23 22:59", false},
		{"daily past midnight", &daily, "2026-11-24 00:59", true},
		{"daily end is exclusive", &daily, "2026-11-24 01:00", false},
		{"daily odd day skipped", &daily, "2026-11-24 23:30", false},
		{"daily every 2nd day", &daily, "2026-11-25 23:30", true},
		{"weekly Monday week 0", &weekly, "2026-11-23 09:30", true},
		{"weekly Friday week 0", &weekly, "2026-11-27 09:00", true},
		{"weekly Tuesday", &weekly, "2026-11-24 09:30", false},
		{"weekly week 1 skipped", &weekly, "2026-11-30 09:30", false},
		{"weekly week 2", &weekly, "2026-12-07 09:30", true},
		{"once inside", &once, "2026-12-01 10:29", true},
		{"once after", &once, "2026-12-01 10:30", false},
		{"active_till bounds the period", &bounded, "2026-11-23 23:45", false},
		{"before active_since", &daily, "2026-11-22 23:30", false},
	} {
		if got := Active(c.m, at(c.at), loc); got != c.want {
			t.Errorf("%s: Active at %s = %v, want %v", c.name, c.at, got, c.want)
		}
	}
	// Across the switch to summer time (2027-03-28 in Riga) a daily
	// period keeps its local start time.
	dst := catalog.Maintenance{ActiveSince: at("2027-03-01 00:00").Unix(), ActiveTill: at("2027-05-01 00:00").Unix(),
		Periods: []catalog.MaintenancePeriod{{Type: catalog.PeriodDaily, Every: 1, StartTime: 9 * 3600, Period: 600}}}
	if !Active(&dst, at("2027-03-29 09:05"), loc) || Active(&dst, at("2027-03-29 08:05"), loc) {
		t.Error("daily period does not follow local time across daylight saving")
	}
}

func TestTagsMatch(t *testing.T) {
	tags := []event.Tag{{Tag: "service", Value: "mysql-db"}, {Tag: "env", Value: "prod"}}
	for _, c := range []struct {
		eval uint8
		cond []catalog.MaintenanceTag
		want bool
	}{
		{0, nil, true},
		{0, []catalog.MaintenanceTag{{Tag: "service", Operator: 2, Value: "db"}}, true},
		{0, []catalog.MaintenanceTag{{Tag: "service", Operator: 0, Value: "db"}}, false},
		{0, []catalog.MaintenanceTag{{Tag: "service", Operator: 0, Value: "x"}, {Tag: "service", Operator: 2, Value: "mysql"}}, true}, // same name: or
		{0, []catalog.MaintenanceTag{{Tag: "service", Operator: 2, Value: "db"}, {Tag: "env", Operator: 0, Value: "test"}}, false},    // names: and
		{2, []catalog.MaintenanceTag{{Tag: "service", Operator: 2, Value: "db"}, {Tag: "env", Operator: 0, Value: "test"}}, true},
		{2, []catalog.MaintenanceTag{{Tag: "none", Operator: 2, Value: ""}}, false},
	} {
		m := catalog.Maintenance{TagsEval: c.eval, Tags: c.cond}
		if got := tagsMatch(&m, tags); got != c.want {
			t.Errorf("evaltype %d %+v: %v, want %v", c.eval, c.cond, got, c.want)
		}
	}
}
