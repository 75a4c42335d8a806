package jsvm

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/dop251/goja"
)

// Kind is what a script is for: it decides the objects the script sees.
type Kind uint8

// The kinds of scripts.
const (
	// Preprocessing is a JavaScript preprocessing step: Zabbix.log is
	// accepted and ignored, HttpRequest and CurlHttpRequest throw (this
	// server makes no requests from preprocessing).
	Preprocessing Kind = 1
	// Webhook is a webhook media type's script: HttpRequest (and the
	// older CurlHttpRequest) make requests through Job.Fetch, Zabbix.log
	// (or Zabbix.Log) goes to Job.Log, btoa and atob are there.
	Webhook Kind = 2
	// Item is a script item's script (Zabbix item type 21): the same
	// objects as a webhook's (HttpRequest through Job.Fetch, Zabbix.log
	// to Job.Log, btoa, atob).
	Item Kind = 3
)

// numKinds bounds the Kind values (arrays indexed by kind).
const numKinds = Item + 1

// requests reports whether scripts of kind k make requests and log
// (webhooks and script items).
func (k Kind) requests() bool { return k == Webhook || k == Item }

func (k Kind) String() string {
	switch k {
	case Preprocessing:
		return "preprocessing"
	case Webhook:
		return "webhook"
	case Item:
		return "item"
	}
	return "kind " + strconv.Itoa(int(k))
}

// DefaultMemLimit bounds how far one run may grow its heap, Zabbix's
// limit of a script's heap (512 MiB, the same for preprocessing and
// webhooks).
const DefaultMemLimit = 512 << 20

// DefaultTimeout is a run's time limit when its Job says none.
const DefaultTimeout = 10 * time.Second

// Job is one run of a script.
type Job struct {
	Kind Kind
	// Script is the body of a function of one argument, value, as
	// Zabbix's scripts are written.
	Script string
	// Program is Script compiled by Compile, if the caller has it: Local
	// runs it instead of compiling Script again. A Pool sends Script.
	Program *goja.Program
	// Value is the script's argument.
	Value string
	// Timeout is the run's time limit (0: DefaultTimeout). A context
	// deadline that comes earlier wins.
	Timeout time.Duration
	// MaxResult bounds the length of the returned value's text (0: only
	// the pipe's bound); a longer one fails the run with reason
	// TooLarge, in the worker, so that the caller never holds it.
	MaxResult int
	// Fetch makes the requests of a webhook's HttpRequest; nil makes
	// them throw. It is called on the goroutine that called Run.
	Fetch FetchFunc
	// Log receives a webhook's Zabbix.log calls; nil drops them. Called
	// on the goroutine that called Run.
	Log func(level, msg string)
}

func (j *Job) timeout(ctx context.Context) time.Duration {
	d := j.Timeout
	if d <= 0 {
		d = DefaultTimeout
	}
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl))
	}
	return d
}

// Request is one request of a webhook script's HttpRequest.
type Request struct {
	Method, URL string
	// Header holds the lines given to addHeader, "Name: value", in order.
	Header []string
	// Body is the request's body; HasBody is false for a request without
	// one (no second argument, or undefined or null).
	Body    string
	HasBody bool
}

// Response is what a FetchFunc returns to the script.
type Response struct {
	Status int
	// Header maps lower-case header names to their values, joined by
	// ", " (getHeaders).
	Header map[string]string
	Body   string
}

// FetchFunc makes one request of a webhook script. Its error is thrown
// into the script (as a GoError with the error's text).
type FetchFunc func(ctx context.Context, r *Request) (*Response, error)

// Result is what a script returned.
type Result struct {
	// Value is the returned value as a string.
	Value string
	// Null says the script returned undefined or null (Value is "").
	Null bool
	// Undefined says it returned undefined (Null is set too): a script
	// item's check fails then, where null is an empty value (Zabbix's
	// rule, recorded from 6.0.14).
	Undefined bool
}

// Reason says why a run failed.
type Reason uint8

// The reasons a run fails.
const (
	// Thrown: the script threw; Error.Msg is the thrown value as text.
	Thrown Reason = iota + 1
	// Timeout: the script ran past its time limit.
	Timeout
	// OutOfMemory: the script grew past its memory limit.
	OutOfMemory
	// Invalid: the script does not compile.
	Invalid
	// Failed: the runner could not run it (no worker could be started,
	// or the worker failed other than by the script's limits).
	Failed
	// TooLarge: the script returned a value longer than Job.MaxResult.
	TooLarge
)

// Error is a run that failed.
type Error struct {
	Reason Reason
	// Msg is the thrown value (Thrown), the compiler's message (Invalid)
	// or what went wrong (Failed); for Timeout and OutOfMemory a fixed
	// text with the limit.
	Msg string
}

func (e *Error) Error() string { return e.Msg }

// Timeout and memory texts, the same from every runner.
const (
	msgTimeout = "execution timeout"
	msgMemory  = "memory limit exceeded"
)

func timeoutError() *Error { return &Error{Reason: Timeout, Msg: msgTimeout} }

func memoryError(limit uint64) *Error {
	return &Error{Reason: OutOfMemory, Msg: msgMemory + " (" + strconv.FormatUint(limit>>20, 10) + " MiB)"}
}

// IsReason reports whether err is an *Error for reason r.
func IsReason(err error, r Reason) bool {
	var e *Error
	return errors.As(err, &e) && e.Reason == r
}

// Runner runs scripts. Run blocks until the script returned, threw or
// was stopped at a limit; its error is an *Error, or ctx's error when
// ctx was cancelled. Implementations are safe for concurrent use.
type Runner interface {
	Run(ctx context.Context, j *Job) (Result, error)
}

// CompilePrefix starts the message of an *Error of reason Invalid; the
// compiler's own message follows it.
const CompilePrefix = "cannot compile the script: "

// Compile compiles a script as Job.Script is meant: the body of a
// function of value. Its error is an *Error with reason Invalid.
func Compile(script string) (*goja.Program, error) {
	prog, err := goja.Compile("script", "(function (value) {\n"+script+"\n})", false)
	if err != nil {
		return nil, &Error{Reason: Invalid, Msg: CompilePrefix + err.Error()}
	}
	return prog, nil
}
