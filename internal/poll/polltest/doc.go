// Package polltest is the contract every poll.Checker keeps, written
// once as a test suite (Run) that each checker's package calls with its
// own realistic targets on loopback, plus a few such targets (a TCP peer
// that never answers, one that floods).
//
// What the suite holds a checker to (poll.Checker's contract, and what
// the scheduler relies on beyond it):
//
//   - Check returns without waiting for the checks it starts: a batch of
//     checks whose targets never answer, with an hour's timeout, must
//     not hold the call.
//   - done is called exactly once per check: on a value, on a failure,
//     when the check times out, and when ctx ends (also when it ended
//     before Check was called). The Result carries the Check as it was
//     handed over, a valid Status, a Clock (the value's time) and, for
//     not supported and network errors, a message. A value is not
//     reused by the checker after it was reported.
//   - One target that never answers holds no other check of the batch
//     (unless Subject.InOrder says the checker answers in order).
//   - When ctx ends every check still running is reported within
//     seconds, not at its timeout, as abandoned (a network or local
//     error, never a value or not supported); once Subject.Close (when
//     there is one) has returned, no goroutine of the checker is left
//     (Subject.Markers, through testutil.NoLeakedGoroutines).
//   - A check whose target never answers ends by its timeout.
//   - A target that sends without end costs bounded memory: the value
//     reported is at most Subject.MaxValue bytes and the check allocates
//     at most Subject.MaxAlloc bytes in all.
//
// It imports package testing and is for tests only: the production
// binary never links it (cmd/peregrine's TestBinaryLinksNoTestHelpers).
// The suite runs its subtests one after another (the leak check looks
// at the whole process); they take a few seconds in all.
package polltest
