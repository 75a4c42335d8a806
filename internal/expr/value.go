package expr

// evalFunc evaluates one call. The evaluator arrives with the function
// library; until then the table holds only the parse-time rules.
type evalFunc func(c *Call) error
