package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration written in YAML as "30s", "5m", "1h".
type Duration time.Duration

// UnmarshalYAML accepts Go duration strings.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration such as 30s or 5m", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// String formats like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// ByteSize is a size in bytes written in YAML as a number or with a binary
// suffix: "512KiB", "128MiB", "1GiB" (KB/MB/GB are read as the same powers
// of 1024, as operators usually mean them here).
type ByteSize int64

// UnmarshalYAML accepts plain numbers and suffixed sizes.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*b = ByteSize(v)
	return nil
}

// ParseByteSize parses "1048576", "64KiB", "128MiB", "1GiB".
func ParseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, suf := range []struct {
		s string
		m int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, suf.s) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, suf.s)), suf.m
			break
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size such as 1048576, 64KiB or 128MiB", s)
	}
	return v * mult, nil
}
