package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Password hashes are stored as PHC-style strings:
//
//	$argon2id$v=19$m=65536,t=2,p=1$<salt>$<key>
//
// salt and key are unpadded standard base64. The cost parameters travel
// with each hash, so a hash made with older (or test) parameters still
// verifies after Options.HashParams change; Login re-hashes such a
// password with the current parameters once it has verified it.
//
// The parser is strict (canonical decimals, canonical base64, fixed field
// order): a string it accepts encodes back to the same bytes, and the
// limits below keep a corrupt or hostile row from asking for gigabytes of
// memory or minutes of CPU.
const (
	hashSaltLen = 16 // bytes of random salt per hash
	hashKeyLen  = 32 // bytes of derived key

	minSaltLen = 8
	maxSaltLen = 64
	minKeyLen  = 16
	maxKeyLen  = 64

	maxHashMemory  = 1 << 21 // KiB (2 GiB)
	maxHashTime    = 64
	hashPrefix     = "$argon2id$v=19$"
	argon2idPrefix = "argon2id"
)

// b64 is the PHC base64 flavour: standard alphabet, no padding. Strict
// rejects non-zero trailing bits, so that decoding is one-to-one.
var b64 = base64.RawStdEncoding.Strict()

// HashParams are the argon2id cost parameters for new password hashes.
// Zero fields take the defaults (DefaultHashParams).
type HashParams struct {
	// Memory is the memory cost in KiB. Default 65536 (64 MiB), the
	// second recommended option of RFC 9106 scaled to one lane.
	Memory uint32
	// Time is the number of passes over the memory. Default 2.
	Time uint32
	// Threads is the degree of parallelism (lanes). Default 1: logins
	// are parallel already, so lanes would only compete with each other.
	Threads uint8
}

// DefaultHashParams returns the default argon2id parameters: 64 MiB, two
// passes, one lane. One hash takes about a quarter of a second on a
// modest virtual server core (BenchmarkLoginDefaultParams), which is
// the price of every login and the attacker's price per guess.
func DefaultHashParams() HashParams {
	return HashParams{Memory: 64 * 1024, Time: 2, Threads: 1}
}

func (p HashParams) withDefaults() HashParams {
	d := DefaultHashParams()
	if p.Memory == 0 {
		p.Memory = d.Memory
	}
	if p.Time == 0 {
		p.Time = d.Time
	}
	if p.Threads == 0 {
		p.Threads = d.Threads
	}
	return p
}

// validate checks the limits that the parser enforces too, so that every
// hash we write can be read back.
func (p HashParams) validate() error {
	switch {
	case p.Threads == 0:
		return errors.New("threads must be at least 1")
	case p.Memory < 8*uint32(p.Threads):
		return fmt.Errorf("memory %d KiB is below the argon2 minimum of 8 KiB per thread (%d threads)", p.Memory, p.Threads)
	case p.Memory > maxHashMemory:
		return fmt.Errorf("memory %d KiB is above the limit of %d KiB", p.Memory, maxHashMemory)
	case p.Time == 0 || p.Time > maxHashTime:
		return fmt.Errorf("time %d is outside 1..%d", p.Time, maxHashTime)
	}
	return nil
}

// phc is a decoded password hash.
type phc struct {
	params HashParams
	salt   []byte
	key    []byte
}

func (h phc) String() string {
	b := make([]byte, 0, 64+b64.EncodedLen(len(h.salt))+b64.EncodedLen(len(h.key)))
	b = append(b, hashPrefix...)
	b = append(b, "m="...)
	b = strconv.AppendUint(b, uint64(h.params.Memory), 10)
	b = append(b, ",t="...)
	b = strconv.AppendUint(b, uint64(h.params.Time), 10)
	b = append(b, ",p="...)
	b = strconv.AppendUint(b, uint64(h.params.Threads), 10)
	b = append(b, '$')
	b = b64.AppendEncode(b, h.salt)
	b = append(b, '$')
	b = b64.AppendEncode(b, h.key)
	return string(b)
}

// parseHash decodes a PHC string written by phc.String. Errors never
// quote the input: it is secret-adjacent.
func parseHash(s string) (phc, error) {
	var h phc
	rest, ok := strings.CutPrefix(s, hashPrefix)
	if !ok {
		return h, errors.New("not an argon2id v=19 hash")
	}
	params, rest, ok := strings.Cut(rest, "$")
	if !ok {
		return h, errors.New("missing salt")
	}
	salt, key, ok := strings.Cut(rest, "$")
	if !ok {
		return h, errors.New("missing key")
	}
	ms, rest, ok1 := strings.Cut(params, ",")
	ts, ps, ok2 := strings.Cut(rest, ",")
	if !ok1 || !ok2 {
		return h, errors.New("parameters are not m=,t=,p=")
	}
	m, err := parseParam(ms, "m=", maxHashMemory)
	if err != nil {
		return h, err
	}
	t, err := parseParam(ts, "t=", maxHashTime)
	if err != nil {
		return h, err
	}
	p, err := parseParam(ps, "p=", 255)
	if err != nil {
		return h, err
	}
	h.params = HashParams{Memory: uint32(m), Time: uint32(t), Threads: uint8(p)}
	if err := h.params.validate(); err != nil {
		return h, err
	}
	if h.salt, err = decodeB64(salt, minSaltLen, maxSaltLen); err != nil {
		return h, fmt.Errorf("salt: %w", err)
	}
	if h.key, err = decodeB64(key, minKeyLen, maxKeyLen); err != nil {
		return h, fmt.Errorf("key: %w", err)
	}
	return h, nil
}

// parseParam parses "<name><canonical decimal>" with an upper bound.
func parseParam(s, name string, max uint64) (uint64, error) {
	digits, ok := strings.CutPrefix(s, name)
	if !ok {
		return 0, fmt.Errorf("expected parameter %s", name[:1])
	}
	if digits == "" || len(digits) > 10 || (digits[0] == '0' && len(digits) > 1) {
		return 0, fmt.Errorf("parameter %s is not a canonical decimal", name[:1])
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("parameter %s is not a canonical decimal", name[:1])
		}
		v = v*10 + uint64(c-'0')
	}
	if v > max {
		return 0, fmt.Errorf("parameter %s is above %d", name[:1], max)
	}
	return v, nil
}

func decodeB64(s string, minLen, maxLen int) ([]byte, error) {
	if len(s) > b64.EncodedLen(maxLen) {
		return nil, errors.New("too long")
	}
	// encoding/base64 skips CR and LF; refuse them, or two strings
	// would decode to one hash (found by FuzzParseHash).
	if strings.ContainsAny(s, "\r\n") {
		return nil, errors.New("not canonical unpadded base64")
	}
	b, err := b64.DecodeString(s)
	if err != nil {
		return nil, errors.New("not canonical unpadded base64")
	}
	if len(b) < minLen {
		return nil, errors.New("too short")
	}
	return b, nil
}

// hasher derives and checks password hashes. The number of concurrent
// derivations is bounded by sem: each one holds Memory KiB for its
// duration, and a burst of logins must not multiply that without limit.
type hasher struct {
	params HashParams
	sem    chan struct{}
	// dummySalt and dummyKey stand in for the stored hash of a user that
	// does not exist, so that an unknown user costs one derivation with
	// the current parameters, like a real one.
	dummySalt, dummyKey []byte
}

func newHasher(p HashParams, concurrency int) *hasher {
	h := &hasher{
		params:    p,
		sem:       make(chan struct{}, concurrency),
		dummySalt: make([]byte, hashSaltLen),
		dummyKey:  make([]byte, hashKeyLen),
	}
	rand.Read(h.dummySalt)
	rand.Read(h.dummyKey)
	return h
}

// derive runs argon2id while holding a hashing slot.
func (h *hasher) derive(ctx context.Context, password string, salt []byte, p HashParams, keyLen int) ([]byte, error) {
	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-h.sem }()
	return argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(keyLen)), nil
}

// hash returns the PHC string of password with a fresh random salt and
// the current parameters.
func (h *hasher) hash(ctx context.Context, password string) (string, error) {
	salt := make([]byte, hashSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("auth: cannot read random salt: %w", err)
	}
	key, err := h.derive(ctx, password, salt, h.params, hashKeyLen)
	if err != nil {
		return "", err
	}
	return phc{params: h.params, salt: salt, key: key}.String(), nil
}

// verify reports whether password matches the stored hash, and whether
// the hash should be replaced because it was made with other parameters.
// The comparison is constant-time. An error means the stored hash is
// malformed (ErrCorrupt) or ctx ended while waiting for a slot.
func (h *hasher) verify(ctx context.Context, stored, password string) (ok, stale bool, err error) {
	ph, err := parseHash(stored)
	if err != nil {
		// Spend the time anyway: a corrupt row must not be told apart
		// from a wrong password by its speed.
		if berr := h.burn(ctx, password); berr != nil {
			return false, false, berr
		}
		return false, false, fmt.Errorf("%w: malformed password hash: %v", ErrCorrupt, err)
	}
	key, err := h.derive(ctx, password, ph.salt, ph.params, len(ph.key))
	if err != nil {
		return false, false, err
	}
	ok = subtle.ConstantTimeCompare(key, ph.key) == 1
	stale = ph.params != h.params || len(ph.salt) != hashSaltLen || len(ph.key) != hashKeyLen
	return ok, stale, nil
}

// burn derives a key for password against the dummy salt and compares it
// with the dummy key, costing what verify costs for a real user.
func (h *hasher) burn(ctx context.Context, password string) error {
	key, err := h.derive(ctx, password, h.dummySalt, h.params, hashKeyLen)
	if err != nil {
		return err
	}
	subtle.ConstantTimeCompare(key, h.dummyKey)
	return nil
}
