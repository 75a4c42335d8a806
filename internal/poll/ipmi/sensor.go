package ipmi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	cmdsensor "github.com/bougou/go-ipmi/pkg/command/sensor"
	"github.com/bougou/go-ipmi/pkg/types"
)

// notFoundError is a sensor the BMC's repository does not list.
type notFoundError struct{ name string }

func (e *notFoundError) Error() string { return "sensor " + e.name + " does not exist" }

// errNoReading is a sensor that answered without a reading (scanning
// disabled, reading unavailable), in 6.0's words.
var errNoReading = errors.New("sensor data is not available")

// reservationCancelled is the completion code of a read whose
// repository reservation another requester cancelled.
const reservationCancelled = 0xc5

// maxSDRRestarts bounds the walks restarted for a cancelled
// reservation.
const maxSDRRestarts = 6

// maxSDRRecords bounds the records read of one repository: a BMC whose
// "next record" chain loops or never ends costs a bounded walk.
const maxSDRRecords = 1024

// sensors returns b's sensor list, read with s when it is older than
// SDRRefresh, or older than a minute when refresh is set (a sensor was
// not found in it).
func (c *Checker) sensors(ctx context.Context, b *bmc, s *session, refresh bool) ([]*sensor, error) {
	b.sdrMu.Lock()
	defer b.sdrMu.Unlock()
	b.mu.Lock()
	list, at := b.sensors, b.readAt
	b.mu.Unlock()
	age := time.Since(at)
	if list != nil && age < c.opts.SDRRefresh && (!refresh || age < time.Minute) {
		return list, nil
	}
	c.sdrReads.Inc()
	var out []*sensor
	id := uint16(0)
	restarts := 0
	for range maxSDRRecords {
		res, err := s.cl.GetSDR(ctx, id)
		var re *types.ResponseError
		if errors.As(err, &re) && re.CompletionCode() == reservationCancelled && restarts < maxSDRRestarts {
			// Another session (ours or another manager's) reserved the
			// repository meanwhile: walk it again from the start.
			// Two walkers that restart at once cancel each other again
			// (sessions with different logins to one BMC do): wait a
			// random, growing moment first.
			restarts++
			out, id = nil, 0
			select {
			case <-time.After(time.Duration(restarts) * (10*time.Millisecond + rand.N(40*time.Millisecond))):
			case <-ctx.Done():
				return nil, fmt.Errorf("cannot read the sensor data repository: %w", ctx.Err())
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read the sensor data repository: %w", err)
		}
		if sn, err := parseSDR(res.RecordData); err == nil {
			out = append(out, sn)
		} else if !errors.Is(err, errNotSensor) {
			c.opts.Logger.Debug("IPMI SDR record skipped", "addr", b.key.host, "record", id, "err", err)
		}
		if res.NextRecordID == 0xffff || res.NextRecordID == id {
			break
		}
		id = res.NextRecordID
	}
	if out == nil {
		out = []*sensor{}
	}
	b.mu.Lock()
	b.sensors, b.readAt = out, time.Now()
	b.mu.Unlock()
	return out, nil
}

// find is the sensor named name: "id:<id>" or a bare id matches the
// record's ID string, "name:<full name>" OpenIPMI's full name
// "(entity.instance).id" (Zabbix 6.0's forms, recorded from 6.0.14).
// Names are compared exactly.
func find(list []*sensor, name string) *sensor {
	byFull := false
	if v, ok := strings.CutPrefix(name, "name:"); ok {
		name, byFull = v, true
	} else if v, ok := strings.CutPrefix(name, "id:"); ok {
		name = v
	}
	for _, s := range list {
		if byFull && s.fullName == name || !byFull && s.id == name {
			return s
		}
	}
	return nil
}

// read is the value of one check: the named sensor's reading, or
// every sensor as ipmi.get's JSON.
func (c *Checker) read(ctx context.Context, b *bmc, s *session, name string, get bool) ([]byte, error) {
	list, err := c.sensors(ctx, b, s, false)
	if err != nil {
		return nil, err
	}
	if get {
		return c.getAll(ctx, s, list)
	}
	sn := find(list, name)
	if sn == nil {
		if list, err = c.sensors(ctx, b, s, true); err != nil {
			return nil, err
		}
		if sn = find(list, name); sn == nil {
			return nil, &notFoundError{name}
		}
	}
	r, err := readSensor(ctx, s, sn)
	if err != nil {
		return nil, err
	}
	if !r.ok {
		return nil, errNoReading
	}
	if sn.threshold() {
		return formatValue(nil, sn.convert(r.raw)), nil
	}
	return strconv.AppendUint(nil, uint64(r.states), 10), nil
}

// reading is what Get Sensor Reading answered.
type reading struct {
	ok     bool   // a reading is there (scanning enabled, not unavailable)
	raw    uint8  // threshold sensors' raw value
	states uint16 // threshold state bits (0-5) or discrete states (0-14), masked
}

// readSensor asks sn's reading. A completion code (the BMC answered
// "no") is an error of the sensor, worded as OpenIPMI's
// ("error 0x10000cb while reading threshold sensor").
func readSensor(ctx context.Context, s *session, sn *sensor) (reading, error) {
	res, err := s.cl.GetSensorReading(withOwner(ctx, sn), sn.number)
	if err != nil {
		var re *types.ResponseError
		if errors.As(err, &re) {
			kind := "discrete"
			if sn.threshold() {
				kind = "threshold"
			}
			return reading{}, &ccError{fmt.Sprintf("error 0x%x while reading %s sensor", 0x1000000|uint32(re.CompletionCode()), kind)}
		}
		return reading{}, err
	}
	r := reading{ok: !res.SensorScanningDisabled && !res.ReadingUnavailable, raw: res.Reading}
	if sn.threshold() {
		for i, set := range []bool{res.Below_LNC, res.Below_LCR, res.Below_LNR, res.Above_UNC, res.Above_UCR, res.Above_UNR} {
			if set {
				r.states |= 1 << i
			}
		}
		return r, nil
	}
	r.states = statesOf(res) & sn.readingMask
	return r, nil
}

// ccError is a completion code of a reading: the BMC answered, so the
// item is not supported, the session fine.
type ccError struct{ msg string }

func (e *ccError) Error() string { return e.msg }

// statesOf is the discrete states of a reading as bits 0-14.
func statesOf(res *cmdsensor.GetSensorReadingResponse) uint16 {
	a := res.ActiveStates
	var v uint16
	for i, set := range []bool{a.State_0, a.State_1, a.State_2, a.State_3, a.State_4, a.State_5, a.State_6, a.State_7,
		a.State_8, a.State_9, a.State_10, a.State_11, a.State_12, a.State_13, a.State_14} {
		if set {
			v |= 1 << i
		}
	}
	return v
}

// getAll is ipmi.get's value: every sensor of the repository as Zabbix
// 6.0's JSON array (recorded from 6.0.14): id, name, sensor type and
// reading type with their names, state with the names of the states
// set; threshold sensors add value, units and their readable
// thresholds. A sensor without a reading is left out; a BMC that stops
// answering fails the whole check.
func (c *Checker) getAll(ctx context.Context, s *session, list []*sensor) ([]byte, error) {
	out := make([]byte, 0, 256*len(list))
	out = append(out, '[')
	n := 0
	for _, sn := range list {
		r, err := readSensor(ctx, s, sn)
		var ce *ccError
		if errors.As(err, &ce) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !r.ok {
			continue
		}
		var th *cmdsensor.GetSensorThresholdsResponse
		if sn.threshold() && sn.readable != 0 {
			th, err = s.cl.GetSensorThresholds(withOwner(ctx, sn), sn.number)
			if err != nil && !errors.As(err, new(*types.ResponseError)) {
				return nil, err
			}
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = appendSensor(out, sn, r, th)
	}
	return append(out, ']'), nil
}

// appendSensor appends one sensor's object of ipmi.get.
func appendSensor(dst []byte, sn *sensor, r reading, th *cmdsensor.GetSensorThresholdsResponse) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, sn.id)
	dst = append(dst, `,"name":`...)
	dst = appendJSONString(dst, sn.fullName)
	dst = append(dst, `,"sensor":{"type":`...)
	dst = strconv.AppendUint(dst, uint64(sn.sensorType), 10)
	dst = append(dst, `,"text":`...)
	dst = appendJSONString(dst, sensorTypeName(sn.sensorType))
	dst = append(dst, `},"reading":{"type":`...)
	dst = strconv.AppendUint(dst, uint64(sn.readingType), 10)
	dst = append(dst, `,"text":`...)
	dst = appendJSONString(dst, readingTypeName(sn.readingType))
	dst = append(dst, `},"state":{"state":`...)
	dst = strconv.AppendUint(dst, uint64(r.states), 10)
	dst = append(dst, `,"text":`...)
	dst = appendJSONString(dst, stateText(sn, r.states))
	dst = append(dst, '}')
	if sn.threshold() {
		dst = append(dst, `,"value":`...)
		dst = strconv.AppendFloat(dst, sn.convert(r.raw), 'f', 6, 64)
		dst = append(dst, `,"units":`...)
		dst = appendJSONString(dst, unitName(sn.baseUnit))
		dst = append(dst, `,"threshold":{"lower":{`...)
		if th != nil {
			dst = appendThresholds(dst, sn, [3]bool{th.LNC_Readable, th.LCR_Readable, th.LNR_Readable}, [3]uint8{th.LNC_Raw, th.LCR_Raw, th.LNR_Raw}, sn.readable)
		}
		dst = append(dst, `},"upper":{`...)
		if th != nil {
			dst = appendThresholds(dst, sn, [3]bool{th.UNC_Readable, th.UCR_Readable, th.UNR_Readable}, [3]uint8{th.UNC_Raw, th.UCR_Raw, th.UNR_Raw}, sn.readable>>3)
		}
		dst = append(dst, `}}`...)
	}
	return append(dst, '}')
}

// appendThresholds appends the readable ones of three thresholds
// (non-critical, critical, non-recoverable): readable by the record's
// mask and by the command's answer.
func appendThresholds(dst []byte, sn *sensor, readable [3]bool, raw [3]uint8, mask uint8) []byte {
	first := true
	for i, name := range [3]string{"non_crit", "crit", "non_recover"} {
		if !readable[i] || mask&(1<<i) == 0 {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, `":`...)
		dst = strconv.AppendFloat(dst, sn.convert(raw[i]), 'f', 6, 64)
	}
	return dst
}

// stateText names the states set: thresholds crossed ("upper critical
// - out of range") or discrete states, joined by ", ".
func stateText(sn *sensor, states uint16) string {
	var b strings.Builder
	for i := range 15 {
		if states&(1<<i) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if sn.threshold() {
			if i < len(thresholdNames) {
				b.WriteString(thresholdNames[i])
				b.WriteString(" - out of range")
			}
			continue
		}
		b.WriteString(stateName(sn.readingType, sn.sensorType, i))
	}
	return b.String()
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}
