package service

import (
	"math"
	"time"
)

// The SLA report (sla.getsli), computed as Zabbix 6.0's frontend does
// from the services' status changes (recorded from Zabbix 6.0.14, see
// sli_test.go).

// MaxDate is the last Unix time Zabbix accepts (2038-01-19).
const MaxDate = math.MaxInt32

// Reporting period bounds of sla.getsli.
const (
	MaxReportingPeriods     = 100
	DefaultReportingPeriods = 20
)

// Period is a reporting period [From, To).
type Period struct {
	From int64 `json:"period_from"`
	To   int64 `json:"period_to"`
}

// Location is the time zone of an SLA: its own, or local for "system".
func Location(tz string, local *time.Location) (*time.Location, bool) {
	if tz == "system" {
		return local, true
	}
	if tz == "" || tz == "Local" {
		return nil, false
	}
	loc, err := time.LoadLocation(tz)
	return loc, err == nil
}

// periodStart aligns t to the start of its reporting period: midnight,
// the Sunday of its week, the first of its month, quarter or year.
func periodStart(t time.Time, period int) time.Time {
	y, m, d := t.Date()
	switch period {
	case PeriodWeekly:
		d -= int(t.Weekday())
	case PeriodMonthly:
		d = 1
	case PeriodQuarterly:
		m, d = (m-1)/3*3+1, 1
	case PeriodAnnually:
		m, d = 1, 1
	}
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// addPeriods moves t, a period start, by n periods of the wall clock.
func addPeriods(t time.Time, period, n int) time.Time {
	switch period {
	case PeriodDaily:
		return t.AddDate(0, 0, n)
	case PeriodWeekly:
		return t.AddDate(0, 0, 7*n)
	case PeriodMonthly:
		return t.AddDate(0, n, 0)
	case PeriodQuarterly:
		return t.AddDate(0, 3*n, 0)
	}
	return t.AddDate(n, 0, 0)
}

// ReportingPeriods are the periods of sla.getsli: from, to and periods
// are its parameters (nil when not given), now the current time, loc the
// SLA's time zone. Without period_to the periods end with the current
// one (or, with period_from, start there); without period_from they go
// back to the effective date; "periods" bounds their number (default
// 20 when a bound is missing, 100 at most).
func ReportingPeriods(sla *SLA, loc *time.Location, from, to *int64, periods *int, now time.Time) []Period {
	p := sla.Period
	effMin := periodStart(time.Unix(sla.EffectiveDate, 0).In(loc), p)
	effMax := addPeriods(periodStart(now.In(loc), p), p, 1)
	var pFrom, pTo *time.Time
	if from != nil {
		t := periodStart(time.Unix(*from, 0).In(loc), p)
		if t.Unix() < 0 {
			t = addPeriods(t, p, 1)
		}
		pFrom = &t
	}
	if to != nil {
		t := addPeriods(periodStart(time.Unix(*to, 0).In(loc), p), p, 1)
		if t.Unix() > MaxDate {
			t = addPeriods(t, p, -1)
		}
		pTo = &t
	} else if pFrom == nil {
		pTo = &effMax
	}
	descend := pTo != nil
	var date time.Time
	if descend {
		date = *pTo
	} else {
		date = *pFrom
	}
	var out []Period
	for len(out) < MaxReportingPeriods {
		if periods != nil {
			if len(out) == *periods {
				break
			}
		} else {
			if (pFrom == nil || pTo == nil) && len(out) == DefaultReportingPeriods {
				break
			}
			if descend {
				if pFrom == nil && !date.After(effMin) {
					break
				}
			} else if !date.Before(effMax) {
				break
			}
		}
		if descend && pFrom != nil && !date.After(*pFrom) {
			break
		}
		if descend {
			end := date.Unix()
			date = addPeriods(date, p, -1)
			if date.Unix() < 0 {
				break
			}
			out = append([]Period{{From: date.Unix(), To: end}}, out...)
		} else {
			start := date.Unix()
			date = addPeriods(date, p, 1)
			if date.Unix() > MaxDate {
				break
			}
			out = append(out, Period{From: start, To: date.Unix()})
		}
	}
	return out
}

// NormalizeSchedule merges overlapping and adjacent parts of a weekly
// schedule and sorts them; the whole week is no schedule (nil).
func NormalizeSchedule(in []Range) []Range {
	var out []Range
	for _, r := range in {
		from, to := r.From, r.To
		for _, c := range out {
			if r.From <= c.To && r.To >= c.From {
				from, to = min(from, c.From), max(to, c.To)
			}
		}
		kept := out[:0]
		for _, c := range out {
			if !(c.From >= from && c.To <= to) {
				kept = append(kept, c)
			}
		}
		out = append(kept, Range{From: from, To: to})
	}
	sortRanges(out)
	if len(out) == 1 && out[0].From == 0 && out[0].To == 7*86400 {
		return nil
	}
	return out
}

func sortRanges(rs []Range) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].From < rs[j-1].From; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// combineDowntimes merges overlapping excluded downtimes (in their
// order, as Zabbix does).
func combineDowntimes(ds []Downtime) []Period {
	var out []Period
	for _, d := range ds {
		from, to := d.From, d.To
		for _, c := range out {
			if d.From <= c.To && d.To >= c.From {
				from, to = min(from, c.From), max(to, c.To)
			}
		}
		kept := out[:0]
		for _, c := range out {
			if !(c.From >= from && c.To <= to) {
				kept = append(kept, c)
			}
		}
		out = append(kept, Period{From: from, To: to})
	}
	return out
}

// scheduledUptime is the part of period p the schedule counts: the
// schedule repeats every 604,800 s from the Sunday 00:00 (in loc) of
// p's start.
func scheduledUptime(sla *SLA, loc *time.Location, p Period) []Period {
	if len(sla.Schedule) == 0 {
		return []Period{p}
	}
	t := time.Unix(p.From, 0).In(loc)
	y, m, d := t.Date()
	sunday := time.Date(y, m, d-int(t.Weekday()), 0, 0, 0, 0, loc)
	weekStart := sunday.Unix()
	var out []Period
	for week := int64(0); ; week++ {
		base := weekStart + 7*86400*week
		for _, r := range sla.Schedule {
			from, to := base+r.From, base+r.To
			if from < p.To && to > p.From {
				nf, nt := max(p.From, from), min(p.To, to)
				if n := len(out); n > 0 && out[n-1].To == nf {
					out[n-1].To = nt
				} else {
					out = append(out, Period{From: nf, To: nt})
				}
			}
			if to >= p.To {
				return out
			}
		}
	}
}

// SLIService is what the SLI of one service needs: when it was created
// and its status over each reporting period.
type SLIService struct {
	ID        uint64
	CreatedAt int64
	Timelines []Timeline // one per period
}

// SLI is one cell of the report.
type SLI struct {
	Uptime, Downtime int64
	// SLI is the percentage of uptime, -1 when nothing was counted.
	SLI               float64
	ErrorBudget       int64
	ExcludedDowntimes []Downtime
}

// ComputeSLI computes the report: sli[period][service] (nil when there
// are no periods or no services). now is the current Unix time.
func ComputeSLI(sla *SLA, loc *time.Location, periods []Period, services []SLIService, now int64) [][]SLI {
	if len(periods) == 0 || len(services) == 0 {
		return nil
	}
	combined := combineDowntimes(sla.ExcludedDowntimes)
	out := make([][]SLI, len(periods))
	for pi, rp := range periods {
		sched := scheduledUptime(sla, loc, rp)
		out[pi] = make([]SLI, len(services))
		for si, svc := range services {
			cell := SLI{SLI: -1, ExcludedDowntimes: []Downtime{}}
			var maxUptime int64
			for _, sp := range sched {
				from, to := max(svc.CreatedAt, sp.From), sp.To
				if to-from <= 0 {
					continue
				}
				maxUptime += to - from
				for _, c := range combined {
					if d := min(c.To, to) - max(c.From, from); d > 0 {
						maxUptime -= d
					}
				}
			}
			type last struct{ cell int }
			lastExcl := map[int]last{}
			prevClock := rp.From
			tl := svc.Timelines[pi]
			prevValue, prevNull := tl.StartValue, false
			alarms := tl.Alarms
			type step struct {
				clock int64
				value int
				null  bool
			}
			steps := make([]step, 0, len(alarms)+1)
			for _, a := range alarms {
				steps = append(steps, step{clock: a.Clock, value: a.Value})
			}
			if len(alarms) == 0 || alarms[len(alarms)-1].Clock <= now {
				steps = append(steps, step{clock: now + 1, null: true})
			}
			for _, a := range steps {
				for _, sp := range sched {
					from := max(svc.CreatedAt, sp.From, prevClock)
					to := min(sp.To, a.clock)
					up := to - from
					if up <= 0 {
						continue
					}
					for _, c := range combined {
						if d := min(c.To, to) - max(c.From, from); d > 0 {
							up -= d
						}
					}
					if !prevNull && prevValue == StatusOK {
						cell.Uptime += up
					} else {
						cell.Downtime += up
					}
					for idx, ed := range sla.ExcludedDowntimes {
						df, dt := max(ed.From, from), min(ed.To, to)
						if dt > df {
							if l, ok := lastExcl[idx]; ok {
								cell.ExcludedDowntimes[l.cell].To = dt
							} else {
								cell.ExcludedDowntimes = append(cell.ExcludedDowntimes, Downtime{Name: ed.Name, From: df, To: dt})
							}
							// Zabbix points at the last entry, also after
							// extending an earlier one.
							lastExcl[idx] = last{cell: len(cell.ExcludedDowntimes) - 1}
						} else {
							delete(lastExcl, idx)
						}
					}
				}
				prevClock, prevValue, prevNull = a.clock, a.value, a.null
			}
			if total := cell.Uptime + cell.Downtime; total != 0 {
				cell.SLI = float64(cell.Uptime) / float64(total) * 100
			}
			if cell.SLI != -1 {
				available := maxUptime - cell.Uptime - cell.Downtime
				if sla.SLO > 0 {
					cell.ErrorBudget = min(available, int64(float64(cell.Uptime)/sla.SLO*100)-cell.Uptime-cell.Downtime)
				} else {
					cell.ErrorBudget = available
				}
			}
			out[pi][si] = cell
		}
	}
	return out
}
