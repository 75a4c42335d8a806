package api

import "strings"

// Calls an HA standby node serves (Options.Standby): reads (every .get,
// configuration.export, sla.getsli, script.getscriptsbyhosts,
// configuration.importcompare), the session methods and the tests that change
// nothing. Everything else changes state, which only the active node
// writes: it is refused with Standby's text, naming the active node,
// rather than forwarded, since ha.node_address is the node's trapper
// address (6.0's NodeAddress), not its API, and a forwarded call would
// carry the user's session to another node.
//
// user.login is a write too (a session is a row the active node writes,
// fenced by its lease, with the user's failed-login count and block): a
// session made on the active node is used on every node;
// user.checkAuthentication only reads. user.logout is served: it only
// deletes its own session's row, which a standby may do without the
// lease (auth/logout.go says why).
var standbyCalls = map[string]bool{
	"apiinfo.version": true, "configuration.export": true,
	"user.checkAuthentication": true, "user.logout": true, "preprocessing.test": true,
	// Reads whose names do not end in .get.
	"sla.getsli": true, "script.getscriptsbyhosts": true, "configuration.importcompare": true,
}

// standbyServes reports whether a standby serves the method.
func standbyServes(method string) bool {
	return strings.HasSuffix(method, ".get") || standbyCalls[method]
}
