package http

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// IsWebPageKey reports whether key is web.page.get, web.page.perf or
// web.page.regexp.
func IsWebPageKey(key string) bool {
	k, err := itemkey.Parse(key)
	if err != nil {
		return false
	}
	switch k.Name {
	case "web.page.get", "web.page.perf", "web.page.regexp":
		return true
	}
	return false
}

// WebPage returns the checker of the web.page.* keys as simple checks
// (Zabbix has them as agent keys; here the server fetches the page),
// sharing c's connections and bounds:
//
//	web.page.get[host,<path>,<port>]    the response: status line, headers, empty line, body
//	web.page.perf[host,<path>,<port>]   seconds to load the whole page
//	web.page.regexp[host,<path>,<port>,regexp,<length>,<output>]
//	                                    the first match in the response (or output with \0..\9
//	                                    replaced by the match's groups), at most length characters;
//	                                    "" without a match
//
// host may be a whole URL (http[s]://host[:port]/path), path and port
// then empty; the default port is 80, the default path "/". Redirects are
// not followed and any status is a page, as Zabbix's agent does it;
// failures make the item not supported. Regular expressions are Go's
// (RE2), not PCRE: no backreferences or lookaround.
func (c *Checker) WebPage() poll.Checker { return webPage{c} }

type webPage struct{ c *Checker }

func (w webPage) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	c := w.c
	c.inFlight.Add(int64(len(batch)))
	for i := range batch {
		c.run(func() {
			r := c.webCheck(ctx, &batch[i])
			c.inFlight.Add(-1)
			c.results[r.Status].Inc()
			done(r)
		})
	}
}

// maxRegexpOutput bounds web.page.regexp's value, Zabbix's MAX_BUFFER_LEN.
const maxRegexpOutput = 65536

func (c *Checker) webCheck(ctx context.Context, ch *poll.Check) *poll.Result {
	res := &poll.Result{Check: *ch}
	k, err := itemkey.Parse(ch.Key)
	if err != nil {
		return c.fail(res, reasonConfig, err.Error())
	}
	maxParams := 3
	if k.Name == "web.page.regexp" {
		maxParams = 6
	}
	param := func(i int) string {
		if i < len(k.Params) {
			return k.Params[i].Value
		}
		return ""
	}
	if len(k.Params) > maxParams {
		return c.fail(res, reasonConfig, "Too many parameters.")
	}
	u, err := pageURL(param(0), param(1), param(2))
	if err != nil {
		return c.fail(res, reasonConfig, err.Error())
	}
	h := &catalog.HTTPItem{URL: u, RetrieveMode: catalog.HTTPRetrieveBoth}
	switch k.Name {
	case "web.page.get":
		return c.request(ctx, res, h, func(resp *http.Response, body []byte) []byte {
			return append(appendHeaders(nil, resp), body...)
		})
	case "web.page.perf":
		start := time.Now()
		return c.request(ctx, res, h, func(*http.Response, []byte) []byte {
			return strconv.AppendFloat(nil, max(time.Since(start).Seconds(), 0.000001), 'f', 6, 64)
		})
	}
	if param(3) == "" {
		return c.fail(res, reasonConfig, "Invalid fourth parameter: the regular expression is required.")
	}
	re, err := regexp.Compile(param(3))
	if err != nil {
		return c.fail(res, reasonConfig, fmt.Sprintf("Invalid fourth parameter: %v", err))
	}
	length := maxRegexpOutput
	if v := param(4); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c.fail(res, reasonConfig, "Invalid fifth parameter: the length must be a positive number.")
		}
		length = min(n, maxRegexpOutput)
	}
	output := param(5)
	return c.request(ctx, res, h, func(resp *http.Response, body []byte) []byte {
		page := append(appendHeaders(nil, resp), body...)
		m := re.FindSubmatchIndex(page)
		if m == nil {
			return []byte{}
		}
		var out []byte
		if output == "" {
			out = page[m[0]:m[1]]
		} else {
			out = expandOutput(nil, output, page, m)
		}
		return cutRunes(out, length)
	})
}

// pageURL builds web.page.*'s URL from host, path and port.
func pageURL(host, path, port string) (string, error) {
	if host == "" {
		return "", errors.New("Invalid first parameter: the host is required.") //lint:ignore ST1005 Zabbix's message
	}
	if strings.Contains(host, "://") {
		if path != "" || port != "" {
			return "", errors.New("Parameters path and port must be empty if URL is specified.") //lint:ignore ST1005 Zabbix's message
		}
		if !strings.HasPrefix(host, "http://") && !strings.HasPrefix(host, "https://") {
			return "", fmt.Errorf("Invalid first parameter: scheme of %q is not http or https.", host) //lint:ignore ST1005 Zabbix's message
		}
		return host, nil
	}
	if port == "" {
		port = "80"
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", errors.New("Invalid third parameter: the port must be 1..65535.") //lint:ignore ST1005 Zabbix's message
	}
	return "http://" + net.JoinHostPort(strings.Trim(host, "[]"), port) + "/" + strings.TrimPrefix(path, "/"), nil
}

// expandOutput appends template with \0..\9 replaced by the groups of
// match m in src (an unmatched group is empty).
func expandOutput(dst []byte, template string, src []byte, m []int) []byte {
	for i := 0; i < len(template); i++ {
		if template[i] == '\\' && i+1 < len(template) && template[i+1] >= '0' && template[i+1] <= '9' {
			g := int(template[i+1] - '0')
			if 2*g+1 < len(m) && m[2*g] >= 0 {
				dst = append(dst, src[m[2*g]:m[2*g+1]]...)
			}
			i++
			continue
		}
		dst = append(dst, template[i])
	}
	return dst
}

// cutRunes returns b cut to n characters (a copy).
func cutRunes(b []byte, n int) []byte {
	i, count := 0, 0
	for i < len(b) && count < n {
		_, size := utf8.DecodeRune(b[i:])
		i += size
		count++
	}
	return append([]byte{}, b[:i]...)
}
