package jsvm

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// maxCallDepth bounds a script's call depth, so that endless recursion
// fails at once ("RangeError: Maximum call stack size exceeded") instead
// of growing the heap to the memory limit.
const maxCallDepth = 10000

// newRuntime returns a fresh runtime with the objects of j's kind. Nothing
// is shared between runs: no state leaks from one value to the next.
func newRuntime(ctx context.Context, j *Job) *goja.Runtime {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallDepth)
	zbx := vm.NewObject()
	if j.Kind.requests() {
		logf := func(c goja.FunctionCall) goja.Value {
			if j.Log != nil {
				j.Log(c.Argument(0).String(), c.Argument(1).String())
			}
			return goja.Undefined()
		}
		_ = zbx.Set("log", logf)
		// Zabbix.Log is the older spelling some of Zabbix's own webhooks use.
		_ = zbx.Set("Log", logf)
		// btoa and atob, as Zabbix's engine has them: base64 of the bytes
		// of a string (UTF-8), and back.
		_ = vm.Set("btoa", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) })
		_ = vm.Set("atob", func(s string) (string, error) {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return "", fmt.Errorf("atob: invalid base64: %w", err)
			}
			return string(b), nil
		})
		ctor := func(c goja.ConstructorCall) *goja.Object { return httpRequest(ctx, vm, j.Fetch, c.This) }
		_ = vm.Set("HttpRequest", ctor)
		_ = vm.Set("CurlHttpRequest", ctor)
	} else {
		_ = zbx.Set("log", func(goja.FunctionCall) goja.Value { return goja.Undefined() })
		for _, name := range []string{"HttpRequest", "CurlHttpRequest"} {
			msg := name + " is not supported by this server: scripts cannot make requests"
			_ = vm.Set(name, func(goja.ConstructorCall) *goja.Object { panic(vm.NewTypeError(msg)) })
		}
	}
	_ = vm.Set("Zabbix", zbx)
	return vm
}

// httpRequest fills this with Zabbix's HttpRequest methods, making the
// requests with fetch.
func httpRequest(ctx context.Context, vm *goja.Runtime, fetch FetchFunc, this *goja.Object) *goja.Object {
	var headers []string
	status := 0
	var respHeaders map[string]string
	_ = this.Set("addHeader", func(h string) { headers = append(headers, h) })
	_ = this.Set("clearHeader", func() { headers = nil })
	_ = this.Set("getStatus", func() int { return status })
	_ = this.Set("getHeaders", func() map[string]any {
		out := make(map[string]any, len(respHeaders))
		for k, v := range respHeaders {
			out[k] = v
		}
		return out
	})
	_ = this.Set("setProxy", func(string) {})
	_ = this.Set("setHttpAuth", func(goja.FunctionCall) goja.Value { return goja.Undefined() })
	do := func(method string) func(goja.FunctionCall) goja.Value {
		return func(c goja.FunctionCall) goja.Value {
			if fetch == nil {
				panic(vm.NewGoError(errors.New("cannot send request: requests are not allowed here")))
			}
			r := &Request{Method: method, URL: c.Argument(0).String(), Header: append([]string(nil), headers...)}
			if len(c.Arguments) > 1 && !goja.IsUndefined(c.Argument(1)) && !goja.IsNull(c.Argument(1)) {
				r.Body, r.HasBody = c.Argument(1).String(), true
			}
			resp, err := fetch(ctx, r)
			if err != nil {
				panic(vm.NewGoError(err))
			}
			status, respHeaders = resp.Status, resp.Header
			return vm.ToValue(resp.Body)
		}
	}
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"} {
		name := strings.ToLower(m)
		_ = this.Set(name, do(m))
		// The older CurlHttpRequest's names (Get, Post, ...), which some
		// of Zabbix's own webhooks still use.
		_ = this.Set(strings.ToUpper(name[:1])+name[1:], do(m))
	}
	for _, alias := range [][2]string{{"AddHeader", "addHeader"}, {"ClearHeader", "clearHeader"}, {"GetHeaders", "getHeaders"},
		{"Status", "getStatus"}, {"SetProxy", "setProxy"}, {"SetHttpAuth", "setHttpAuth"}} {
		_ = this.Set(alias[0], this.Get(alias[1]))
	}
	return nil
}
