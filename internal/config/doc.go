// Package config owns Peregrine's YAML configuration file: its schema, the
// documented defaults, and validation.
//
// Load applies defaults first and validates after, so an empty or missing
// file yields a working configuration. Errors name the offending field by
// its YAML path (for example "trapper.max_frame_size"), so an operator
// knows what to change. The package holds no state; a Config is a plain
// value that callers copy.
package config
