// Package api is Peregrine's Zabbix-compatible JSON-RPC 2.0 API at
// POST /api_jsonrpc.php: request decoding (single and batch), the error
// object and codes of the Zabbix API, authentication (the "auth" member
// or "Authorization: Bearer"), per-method roles, request limits, and one
// file per object family: apiinfo.go, hostgroup.go, host.go, item.go
// (with item_rows.go), history.go, user.go, usergroup.go, token.go,
// push.go. The
// params vocabulary every method decodes into (IDs, integers, strings
// as Zabbix clients send them) is in params.go, the parameters all get
// methods share in get.go, and catalog.go turns catalog edit errors into
// Zabbix's.
//
// Get methods refuse members they do not know, as Zabbix does, with
// `Invalid parameter "/": unexpected parameter "xyz".` (decodeGet), so
// that a misspelt or unsupported filter is an error and never a wrong
// answer.
//
// Permissions (perm.go): a super admin may do everything; anybody else
// what their user groups' rights on host groups allow, combined as Zabbix
// does (auth.Rights). Get methods, history.get and trend.get omit what
// the caller may not read; writes to hosts and items need read-write and
// otherwise fail as if the object did not exist. The rights are read
// once per request.
//
// It owns no data: it reads the catalog snapshot and the history store
// through the interfaces in this package, and authenticates through the
// small Authenticator interface that *auth.Store (internal/auth)
// implements as is; user and token management call the *auth.Store
// directly. main wires them. Responses of history methods are streamed
// from the store to the socket, so memory does not grow with the row
// count.
//
// Concurrency: the Handler serves requests concurrently; every
// dependency is safe for concurrent use.
package api
