// Package poll is the check scheduler: for every enabled item of a polled
// type on a monitored host, it keeps the next check time (package
// delay), hands due checks in batches to the Checker of the item's type
// (package poll/agent for Zabbix agent items) and brings the results to
// the same path as trapper values.
package poll
