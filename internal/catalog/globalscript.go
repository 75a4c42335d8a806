package catalog

import (
	"maps"
	"slices"
)

// scriptSchema holds global scripts (schema version 13), one row per
// script as JSON with Zabbix's field names, like media types and
// actions: part of the notification configuration (AlertConfig), read
// and written whole with it.
const scriptSchema = `
CREATE TABLE IF NOT EXISTS scripts (
	id     INTEGER PRIMARY KEY,
	name   TEXT NOT NULL,
	config TEXT NOT NULL
);
`

// migrateScripts is the migration 12 → 13 (global scripts),
// self-contained so that schema changes made in parallel renumber
// cleanly.
func migrateScripts() string { return scriptSchema }

// Script types, scopes and where a script runs (Zabbix 6.0's script
// "type", "scope" and "execute_on").
const (
	ScriptCustom  = 0 // a command: /bin/sh -c on the server, system.run on the agent
	ScriptWebhook = 5 // JavaScript run on the server with its parameters as "value"

	ScopeAction      = 1 // action operations
	ScopeManualHost  = 2 // manual host action (script.execute with a host)
	ScopeManualEvent = 4 // manual event action (script.execute with an event)

	ExecOnAgent  = 0
	ExecOnServer = 1
	ExecOnProxy  = 2 // no proxies: runs on the server, as Zabbix does for a host without one
)

// GlobalScript is a Zabbix 6.0 global script of type "script".
type GlobalScript struct {
	ID          uint64 `json:"scriptid"`
	Name        string `json:"name"`
	Type        int    `json:"type"`
	Scope       int    `json:"scope"`
	Command     string `json:"command"`
	ExecuteOn   int    `json:"execute_on"`
	Description string `json:"description"`
	MenuPath    string `json:"menu_path"`
	// UserGroupID is the user group allowed to run it by hand (0: all);
	// GroupID the host group of the hosts it runs on (0: all);
	// HostAccess the permission on the host it needs (2 read, 3 write).
	UserGroupID  uint64 `json:"usrgrpid"`
	GroupID      uint64 `json:"groupid"`
	HostAccess   int    `json:"host_access"`
	Confirmation string `json:"confirmation"`
	// Timeout ("5s", 1-60 seconds) and Parameters are a webhook
	// script's: its time limit ("" is Zabbix's 30s) and the name/value
	// pairs, macros in the values, it is given as a JSON object.
	Timeout    string        `json:"timeout,omitempty"`
	Parameters []ScriptParam `json:"parameters,omitempty"`
}

// ScriptParam is one of a webhook script's parameters.
type ScriptParam struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// SortedScripts returns the scripts by ID.
func (c *AlertConfig) SortedScripts() []*GlobalScript {
	out := slices.Collect(maps.Values(c.Scripts))
	slices.SortFunc(out, func(a, b *GlobalScript) int { return cmpID(a.ID, b.ID) })
	return out
}
