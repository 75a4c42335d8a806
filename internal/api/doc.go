// Package api is Peregrine's Zabbix-compatible JSON-RPC 2.0 API at
// POST /api_jsonrpc.php: request decoding (single and batch), the error
// object and codes of the Zabbix API, authentication (the "auth" member
// or "Authorization: Bearer"), per-method roles, request limits, and one
// file per method family (apiinfo.go, user.go, history.go, ...).
//
// It owns no data: it reads the catalog snapshot, the history store and
// the auth store through the interfaces in this package, which main
// wires. Responses of history methods are streamed from the store to the
// socket, so memory does not grow with the row count.
//
// Concurrency: the Handler serves requests concurrently; every
// dependency is safe for concurrent use.
package api
