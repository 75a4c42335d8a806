package preprocess

import (
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Steps with user macros are checked when compiled with the host's
// values; without macros, as before.
func TestCheckStepsWithMacros(t *testing.T) {
	if err := CheckSteps([]catalog.PreprocStep{{Type: 1, Params: "{$MULT}"}}); err != nil {
		t.Fatalf("multiplier {$MULT}: %v", err)
	}
	if err := CheckSteps([]catalog.PreprocStep{{Type: 1, Params: "x"}}); err == nil {
		t.Fatal("multiplier x accepted")
	}
}
