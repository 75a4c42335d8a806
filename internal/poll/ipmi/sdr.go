package ipmi

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// sensor is what a Full (type 1) or Compact (type 2) sensor data
// record says about one sensor: where it is, what it measures and how
// its raw readings convert. Parsed here rather than by the IPMI library
// from the record's bytes: the masks (which states and thresholds a
// sensor returns) decide values, and parsing them is small and fuzzed.
type sensor struct {
	id       string // the record's ID string: what ipmi_sensor names
	fullName string // "(entity.instance).id", as OpenIPMI names it
	owner    uint8  // sensor owner (IPMB slave address or software ID)
	lun      uint8
	number   uint8
	entity   uint8
	instance uint8

	sensorType  uint8
	readingType uint8 // event/reading type code: 1 threshold, 0x6f sensor specific, ...

	// readingMask: the discrete states Get Sensor Reading returns
	// (bits 0-14); for threshold sensors the thresholds that can be
	// read (bits 0-5, lower non-critical first).
	readingMask uint16
	readable    uint8

	// Conversion of threshold sensors' raw readings (Full records).
	full       bool
	format     uint8 // analog data format: 0 unsigned, 1 one's complement, 2 two's complement, 3 none
	baseUnit   uint8
	linear     uint8 // linearization
	m, b       int16
	rExp, bExp int8
}

// threshold reports whether s reads a value rather than states.
func (s *sensor) threshold() bool { return s.readingType == 1 }

// errNotSensor is a record that holds no sensor (device locators, OEM
// records, event-only sensors): skipped.
var errNotSensor = errors.New("not a sensor record")

// parseSDR parses one SDR record (header included).
func parseSDR(rec []byte) (*sensor, error) {
	if len(rec) < 5 {
		return nil, fmt.Errorf("SDR record of %d bytes, shorter than its header", len(rec))
	}
	typ := rec[3]
	if typ != 1 && typ != 2 {
		return nil, errNotSensor
	}
	minLen := 48 // a Full record up to its ID string's type/length
	if typ == 2 {
		minLen = 32
	}
	if len(rec) < minLen {
		return nil, fmt.Errorf("SDR type %d record of %d bytes, shorter than %d", typ, len(rec), minLen)
	}
	s := &sensor{
		owner: rec[5], lun: rec[6] & 3, number: rec[7], entity: rec[8], instance: rec[9] & 0x7f,
		sensorType: rec[12], readingType: rec[13] & 0x7f,
		full: typ == 1,
	}
	s.readingMask = uint16(rec[18]) | uint16(rec[19]&0x7f)<<8
	if s.threshold() {
		// Readable threshold mask: byte 19 (index 18), bits 0-5; only
		// when the sensor's threshold access allows reading.
		if access := rec[11] >> 2 & 3; access == 1 || access == 2 {
			s.readable = rec[18] & 0x3f
		}
		s.readingMask = 0
	}
	s.format = rec[20] >> 6
	s.baseUnit = rec[21]
	idAt := 47
	if s.full {
		s.linear = rec[23] & 0x7f
		s.m = tenBits(rec[24], rec[25])
		s.b = tenBits(rec[26], rec[27])
		s.rExp = fourBits(rec[29] >> 4)
		s.bExp = fourBits(rec[29] & 0xf)
	} else {
		idAt = 31
	}
	s.id = idString(rec[idAt], rec[idAt+1:])
	s.fullName = "(" + strconv.Itoa(int(s.entity)) + "." + strconv.Itoa(int(s.instance)) + ")." + s.id
	return s, nil
}

// tenBits is a 10-bit two's complement factor: 8 low bits, 2 high bits
// in the top of the next byte.
func tenBits(lo, hi byte) int16 {
	v := int16(lo) | int16(hi>>6)<<8
	if v&0x200 != 0 {
		v -= 0x400
	}
	return v
}

// fourBits is a 4-bit two's complement exponent.
func fourBits(v byte) int8 {
	n := int8(v & 0xf)
	if n&8 != 0 {
		n -= 16
	}
	return n
}

// idString decodes an ID string by its type/length byte: 8-bit ASCII
// (type 3, and Unicode, type 0, read as bytes) up to the length; BCD
// plus and 6-bit packed ASCII as the IPMI specification packs them.
func idString(tl byte, b []byte) string {
	n := int(tl & 0x1f)
	n = min(n, len(b))
	b = b[:n]
	switch tl >> 6 {
	case 1: // BCD plus
		const digits = "0123456789 -.:,_"
		out := make([]byte, 0, 2*len(b))
		for _, c := range b {
			out = append(out, digits[c&0xf], digits[c>>4])
		}
		return string(out)
	case 2: // 6-bit packed ASCII, 4 characters in 3 bytes
		out := make([]byte, 0, len(b)*4/3)
		for i := 0; i+2 < len(b)+2; i += 3 {
			var w uint32
			for j := 0; j < 3 && i+j < len(b); j++ {
				w |= uint32(b[i+j]) << (8 * j)
			}
			for j := 0; j < 4 && len(out) < len(b)*4/3; j++ {
				out = append(out, byte(w>>(6*j)&0x3f)+0x20)
			}
		}
		return string(out)
	}
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// convert is a threshold sensor's raw reading (or threshold) in its
// units: y = L[(M*x + B*10^Bexp) * 10^Rexp], as IPMI 2.0 §36.3 defines
// it. Non-linear sensors (linearization 0x70 and up) would need Get
// Sensor Reading Factors per reading; they convert with the record's
// factors, as a linear one.
func (s *sensor) convert(raw uint8) float64 {
	var x float64
	switch s.format {
	case 1: // one's complement
		if raw&0x80 != 0 {
			x = -float64(^raw & 0x7f)
		} else {
			x = float64(raw)
		}
	case 2:
		x = float64(int8(raw))
	default:
		x = float64(raw)
	}
	y := (float64(s.m)*x + float64(s.b)*math.Pow10(int(s.bExp))) * math.Pow10(int(s.rExp))
	switch s.linear {
	case 1:
		y = math.Log(y)
	case 2:
		y = math.Log10(y)
	case 3:
		y = math.Log2(y)
	case 4:
		y = math.Exp(y)
	case 5:
		y = math.Pow(10, y)
	case 6:
		y = math.Exp2(y)
	case 7:
		y = 1 / y
	case 8:
		y *= y
	case 9:
		y = y * y * y
	case 10:
		y = math.Sqrt(y)
	case 11:
		y = math.Cbrt(y)
	}
	return y
}

// formatValue is a converted reading as an item value: the shortest
// text of the value rounded to 12 significant digits, so that 735 × 0.1
// reads "73.5", as Zabbix shows it.
func formatValue(dst []byte, v float64) []byte {
	if v != 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
		if r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64); err == nil {
			v = r
		}
	}
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}
