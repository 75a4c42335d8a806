package preprocess

import (
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Compile parses and validates an item's steps as the catalog stores
// them (ParseStep on each, then ParseChain). The error is a
// *catalog.StepCheckError naming the step (-1 for a rule across steps),
// so CheckSteps can serve as catalog.Options.CheckPreprocessing.
func Compile(steps []catalog.PreprocStep) ([]Step, error) {
	out := make([]Step, len(steps))
	for i, s := range steps {
		st, err := ParseStep(strconv.Itoa(s.Type), s.Params, strconv.Itoa(s.ErrorHandler), s.ErrorHandlerParams)
		if err != nil {
			return nil, &catalog.StepCheckError{Step: i, Err: err}
		}
		out[i] = st
	}
	if err := ParseChain(out); err != nil {
		return nil, &catalog.StepCheckError{Step: -1, Err: err}
	}
	return out, nil
}

// CheckSteps validates steps for the catalog (catalog.Options.
// CheckPreprocessing): Compile without keeping the result. Steps with
// user macros depend on the host's macro values, so they are compiled
// with the values when the item's values are preprocessed (package
// pipeline); a chain that does not compile then makes the item not
// supported, saying why.
func CheckSteps(steps []catalog.PreprocStep) error {
	if catalog.StepsHaveMacros(steps) {
		return nil
	}
	_, err := Compile(steps)
	return err
}
