package alert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// refusal is an error whose text is Zabbix's sentence, as shown.
type refusal string

func (r refusal) Error() string { return string(r) }

// errDisabledTest is 6.0.14's frontend's refusal of a disabled media
// type's test (recorded from the peer).
const errDisabledTest = refusal("Cannot test disabled media type.")

// TestSend sends one message through media type mt now, outside every
// escalation and the alert log, as Zabbix 6.0's media type "Test"
// (its frontend asks the server with an "alert.send" trapper request):
// email, SMS and script to sendto with subject and message; a webhook
// with params as its parameters (sendto, subject and message unused).
// It waits for the sender, bounded by the media type's timeout and
// ctx, and returns a webhook script's return value. A disabled media
// type is refused as 6.0 refuses it.
func (e *Engine) TestSend(ctx context.Context, mt *catalog.MediaType, sendto, subject, message string, params []Param) (string, error) {
	if mt.Status != 0 {
		return "", errDisabledTest
	}
	timeout, err := ParsePeriod(mt.Timeout)
	if err != nil || timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a := &Alert{MediaTypeID: mt.ID, Clock: time.Now().Unix(), SendTo: sendto, Subject: subject, Message: message, Params: params}
	if mt.Type == catalog.MediaWebhook {
		if w, ok := e.senders[mt.Type].(*WebhookSender); ok && strings.TrimSpace(mt.Script) != "" {
			obj := make(map[string]string, len(params))
			for _, p := range params {
				obj[p.Name] = p.Value
			}
			val, _ := json.Marshal(obj)
			return w.run(ctx, mt.Script, string(val))
		}
	}
	s := e.senders[mt.Type]
	switch {
	case s == nil && mt.Type == catalog.MediaSMS:
		return "", errors.New("SMS is not supported by Peregrine (no GSM modem): use a webhook media type")
	case s == nil:
		return "", fmt.Errorf("unsupported media type %d", mt.Type)
	}
	return "", s.Send(ctx, mt, a)
}
