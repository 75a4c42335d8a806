package server

import (
	"context"

	"github.com/peregrine-mon/peregrine/internal/api"
	"github.com/peregrine-mon/peregrine/internal/ingest"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
)

// pusher hands the API's history.push values to the trapper's Push. The
// API owns its value types (it imports nothing of the value path), the
// pipeline owns the intake's; both have the same fields, so this is a
// conversion per value, not a copy of the texts.
type pusher struct{ t *ingest.Server }

func (p pusher) Push(ctx context.Context, values []api.PushValue) ([]api.PushResult, error) {
	in := make([]pipeline.RawValue, len(values))
	for i := range values {
		in[i] = pipeline.RawValue(values[i])
	}
	res, err := p.t.Push(ctx, in)
	if err != nil {
		return nil, err
	}
	out := make([]api.PushResult, len(res))
	for i := range res {
		out[i] = api.PushResult(res[i])
	}
	return out, nil
}

// Import hands history.import values (peregrine migrate) to the
// trapper's Import.
func (p pusher) Import(ctx context.Context, values []api.PushValue) ([]api.PushResult, error) {
	in := make([]pipeline.RawValue, len(values))
	for i := range values {
		in[i] = pipeline.RawValue(values[i])
	}
	res, err := p.t.Import(ctx, in)
	if err != nil {
		return nil, err
	}
	out := make([]api.PushResult, len(res))
	for i := range res {
		out[i] = api.PushResult(res[i])
	}
	return out, nil
}
