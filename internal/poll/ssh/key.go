package ssh

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	gossh "golang.org/x/crypto/ssh"

	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// DefaultPort is where ssh.run connects when its key names no port (not
// the interface's port, which is the agent's).
const DefaultPort = 22

// request is one parsed ssh.run key.
type request struct {
	addr     string // host:port
	encoding string
	algos    algos
}

// algos are the ssh options of the key: the algorithms to offer, nil
// for the library's defaults.
type algos struct {
	kex, hostKeys, ciphers, macs []string
}

// itemError is an item's not supported message, worded as the item's
// error (a sentence, as Zabbix words them).
type itemError string

func (e itemError) Error() string { return string(e) }

// Errors of the key, worded as Zabbix 6.0 words them (recorded from
// 6.0.14).
const (
	errKeyFormat      itemError = "Invalid item key format."
	errKeyName        itemError = "Unsupported item key for this item type."
	errTooManyParams  itemError = "Too many parameters."
	errPort           itemError = "Invalid third parameter."
	errNoAddress      itemError = "SSH checks need the IP parameter of the key or a host interface to connect to."
	errArrayParameter itemError = "Invalid item key format: no parameter of ssh.run may be an array."
)

// parseKey parses ssh.run[<unique short description>,<ip>,<port>,
// <encoding>,<ssh options>]: ip defaults to the interface's address
// (iface, "host:port"), port to 22. The error is the item's message.
func parseKey(key, iface string) (request, error) {
	var r request
	k, err := itemkey.Parse(key)
	if err != nil {
		return r, errKeyFormat
	}
	if k.Name != "ssh.run" {
		return r, errKeyName
	}
	// 6.0.14 takes four parameters and says "Too many parameters." to a
	// fifth; later 6.0 releases added <ssh options>, which Peregrine
	// takes (docs/compat.md).
	if len(k.Params) > 5 {
		return r, errTooManyParams
	}
	p := make([]string, 5)
	for i, v := range k.Params {
		if v.Array != nil {
			return r, errArrayParameter
		}
		p[i] = v.Value
	}
	host := p[1]
	if host == "" && iface != "" {
		host, _, err = net.SplitHostPort(iface)
		if err != nil {
			host = iface
		}
	}
	if host == "" {
		return r, errNoAddress
	}
	port := DefaultPort
	if p[2] != "" {
		n, err := strconv.ParseUint(p[2], 10, 16)
		if err != nil {
			return r, errPort
		}
		port = int(n)
	}
	r.addr = net.JoinHostPort(host, strconv.Itoa(port))
	r.encoding = p[3]
	if r.algos, err = parseOptions(p[4]); err != nil {
		return r, err
	}
	return r, nil
}

// parseOptions parses <ssh options>: "Name=value1,value2;Name=..." with
// the names KexAlgorithms, HostkeyAlgorithms, Ciphers and MACs, each
// value an algorithm golang.org/x/crypto/ssh implements.
func parseOptions(s string) (algos, error) {
	var a algos
	supported, insecure := gossh.SupportedAlgorithms(), gossh.InsecureAlgorithms()
	for opt := range strings.SplitSeq(s, ";") {
		opt = strings.TrimSpace(opt)
		if opt == "" {
			continue
		}
		name, value, _ := strings.Cut(opt, "=")
		var dst *[]string
		var known []string
		switch strings.TrimSpace(name) {
		case "KexAlgorithms":
			dst, known = &a.kex, append(supported.KeyExchanges, insecure.KeyExchanges...)
		case "HostkeyAlgorithms":
			dst, known = &a.hostKeys, append(supported.HostKeys, insecure.HostKeys...)
		case "Ciphers":
			dst, known = &a.ciphers, append(supported.Ciphers, insecure.Ciphers...)
		case "MACs":
			dst, known = &a.macs, append(supported.MACs, insecure.MACs...)
		default:
			return a, itemError(fmt.Sprintf("SSH option %q is not supported.", name))
		}
		for v := range strings.SplitSeq(value, ",") {
			v = strings.TrimSpace(v)
			if !slices.Contains(known, v) {
				return a, itemError(fmt.Sprintf("Cannot set SSH option %q: unknown algorithm %q. Supported values are: %s.", name, v, strings.Join(known, ", ")))
			}
			*dst = append(*dst, v)
		}
	}
	return a, nil
}
