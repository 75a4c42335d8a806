package poll

import (
	"context"
	"time"
)

// Route is one checker of a KeyRouter and the keys it takes.
type Route struct {
	// Match reports whether the route's checker takes key.
	Match   func(key string) bool
	Checker Checker
}

// KeyRouter is the Checker of an item type whose keys several checkers
// serve (the simple checks: icmpping* by package poll/icmp,
// net.tcp.service* by package poll/tcpsvc): it hands each check to the
// first route whose Match takes its key. A key no route takes is not
// supported with Unsupported's message.
type KeyRouter struct {
	Routes []Route
	// Unsupported words the error of a key no route takes; default
	// "Unsupported item key.", Zabbix's message.
	Unsupported func(key string) string
}

// Check splits batch by route and hands each part over; each part is a
// new slice, since a checker may keep its batch.
func (k *KeyRouter) Check(ctx context.Context, batch []Check, done func(*Result)) {
	parts := make([][]Check, len(k.Routes))
	for i := range batch {
		taken := false
		for r, rt := range k.Routes {
			if rt.Match(batch[i].Key) {
				parts[r] = append(parts[r], batch[i])
				taken = true
				break
			}
		}
		if !taken {
			msg := "Unsupported item key."
			if k.Unsupported != nil {
				msg = k.Unsupported(batch[i].Key)
			}
			done(&Result{Check: batch[i], Status: NotSupported, Error: msg, Clock: time.Now()})
		}
	}
	for r, p := range parts {
		if len(p) > 0 {
			k.Routes[r].Checker.Check(ctx, p, done)
		}
	}
}
