// Package itemkey parses and formats Zabbix item keys such as
// system.cpu.load[all,avg1] or log["/var/log/a b.log","err"]
// (shared/spec/zabbix-compat.md §6).
//
// It owns the key syntax only: the name, the parameter list, quoting and
// one level of array parameters. What a key means (which checks exist,
// how many parameters each takes, "Too many parameters.") belongs to the
// pollers and the catalog. Host names, user macros ({$MACRO}) and LLD
// macros are not expanded here; they are plain parameter text, which
// callers replace with Key.MapValues.
//
// Grammar, as the Zabbix agents and server accept it:
//
//	key    = name [ "[" params "]" ]        at most MaxKeyLen characters
//	name   = 1*( ALPHA / DIGIT / "_" / "-" / "." )
//	params = param *( "," param )
//	param  = *SP ( quoted / array / unquoted )
//	array  = "[" elem *( "," elem ) "]" *SP  one level; elem = *SP ( quoted / unquoted )
//	quoted = DQUOTE *( "\" DQUOTE / other ) DQUOTE *SP
//	unquoted = *( any character but "," and "]" )   trailing spaces kept
//
// name[] has one empty parameter; nothing may follow the closing bracket.
// `\"` is the only escape, so a quoted parameter cannot end in a
// backslash.
//
// Concurrency: the package has no state; Key values are plain data.
package itemkey
