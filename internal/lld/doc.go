// Package lld is Peregrine's low-level discovery engine: it turns the
// committed values of discovery rules (catalog items with Item.LLD)
// into discovered items and triggers on the rule's host, and hosts of
// its host prototypes (hosts.go), as Zabbix 6.0 does.
//
// # What it owns
//
//   - Reading a rule's value (rows.go): a JSON array of objects or an
//     object with a "data" array (6.0's error texts otherwise); LLD
//     macros from each row's {#MACRO} members and from the rule's
//     lld_macro_paths (JSONPath, package preprocess/jsonpath).
//   - The filter (filter.go): evaltype and/or, and, or, custom formula;
//     conditions matches, does not match (regular expressions or a
//     global one by "@name"), exists, does not exist; user macros in
//     the values resolved on the rule's host.
//   - Overrides (expand.go) in step order, with stop: on item prototypes
//     status, discover, delay, history, trends, tags; on trigger
//     prototypes status, discover, severity, tags; on host prototypes
//     status, discover, templates, tags (hosts.go); on graph prototypes
//     discover (graphs.go). Host inventory modes are stored, not applied.
//   - Expansion (expand.go): LLD macros substituted in every string of
//     the prototypes (quoted as the item key syntax needs inside keys),
//     trigger prototypes whose items were all discovered become
//     triggers, graph prototypes whose item prototypes were all
//     discovered graphs (ExpandGraphs).
//   - Applying (engine.go): each value is queued (the newest per rule;
//     older ones are replaced, so the queue is bounded by the number of
//     rules) and a worker applies everything queued in ONE catalog Edit
//     (catalog.Edit.ApplyDiscovery per rule): a host or ten thousand
//     whose results arrived together cost one transaction and one
//     snapshot build, and a result that changes nothing writes nothing
//     (no commit, no build).
//
// # What it does not own
//
// It neither polls nor preprocesses: a rule's value comes through the
// pipeline like every value (pollers, trapper, active agents, then
// preprocessing and the store write) and reaches the engine from the
// pipeline's commit hook (Engine.Commit), after it is durable. What is
// created, how lost resources are marked and deleted, is the catalog's
// (catalog/lld_apply.go).
//
// # Concurrency
//
// Commit may be called from any number of shards at once; it copies the
// values of rules it is given under a mutex and signals the worker
// without blocking. Run's single goroutine does the Edits. Rule states
// (errors) are written to the itemstate registry and to the engine's own
// map, read by the API under the same mutex.
package lld
