package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// unreachable is what timeleft returns when the threshold is never
// reached and what forecast is clamped to: the largest double, as Zabbix
// 6.0 does since its float columns hold the full double range.
const unreachable = math.MaxFloat64

// model is a fitted curve: y at time t (seconds after the first value,
// plus one, so that the logarithmic and power fits see t > 0).
type model func(t float64) float64

// fit fits the named curve: linear (the default), polynomial1 to
// polynomial6, exponential, logarithmic, power.
func fit(kind string, t, y []float64) (model, error) {
	switch {
	case kind == "" || kind == "linear" || kind == "polynomial1":
		return polyFit(t, y, 1)
	case strings.HasPrefix(kind, "polynomial"):
		n, err := strconv.Atoi(kind[len("polynomial"):])
		if err != nil || n < 1 || n > 6 {
			return nil, fmt.Errorf("invalid fit %q: polynomial degree must be 1 to 6", kind)
		}
		return polyFit(t, y, n)
	case kind == "exponential":
		ly := make([]float64, len(y))
		for i, v := range y {
			if v <= 0 {
				return nil, fmt.Errorf("exponential fit needs positive values, have %v", v)
			}
			ly[i] = math.Log(v)
		}
		m, err := polyFit(t, ly, 1)
		if err != nil {
			return nil, err
		}
		return func(x float64) float64 { return math.Exp(m(x)) }, nil
	case kind == "logarithmic":
		lt := logs(t)
		m, err := polyFit(lt, y, 1)
		if err != nil {
			return nil, err
		}
		return func(x float64) float64 { return m(math.Log(x)) }, nil
	case kind == "power":
		ly := make([]float64, len(y))
		for i, v := range y {
			if v <= 0 {
				return nil, fmt.Errorf("power fit needs positive values, have %v", v)
			}
			ly[i] = math.Log(v)
		}
		m, err := polyFit(logs(t), ly, 1)
		if err != nil {
			return nil, err
		}
		return func(x float64) float64 { return math.Exp(m(math.Log(x))) }, nil
	}
	return nil, fmt.Errorf("invalid fit %q", kind)
}

func logs(t []float64) []float64 {
	out := make([]float64, len(t))
	for i, v := range t {
		out[i] = math.Log(v)
	}
	return out
}

// polyFit is least squares for a polynomial of degree n, solving the
// normal equations by Gaussian elimination with partial pivoting. Fewer
// points than coefficients leave the system singular: with one value a
// line is flat at that value (Zabbix forecasts a constant then).
func polyFit(t, y []float64, n int) (model, error) {
	if len(t) == 1 {
		c := y[0]
		return func(float64) float64 { return c }, nil
	}
	if len(t) <= n {
		return nil, fmt.Errorf("not enough data: a degree %d fit needs %d values, have %d", n, n+1, len(t))
	}
	// Center and scale time so that t^12 stays representable.
	t0, scale := t[0], math.Max(t[len(t)-1]-t[0], 1)
	k := n + 1
	a := make([][]float64, k)
	for i := range a {
		a[i] = make([]float64, k+1)
	}
	for i, ti := range t {
		x := (ti - t0) / scale
		pw := make([]float64, 2*n+1)
		pw[0] = 1
		for j := 1; j < len(pw); j++ {
			pw[j] = pw[j-1] * x
		}
		for r := 0; r < k; r++ {
			for c := 0; c < k; c++ {
				a[r][c] += pw[r+c]
			}
			a[r][k] += pw[r] * y[i]
		}
	}
	for col := 0; col < k; col++ {
		p := col
		for r := col + 1; r < k; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[p][col]) {
				p = r
			}
		}
		if math.Abs(a[p][col]) < 1e-300 {
			return nil, fmt.Errorf("cannot fit: the values' times do not vary")
		}
		a[col], a[p] = a[p], a[col]
		for r := 0; r < k; r++ {
			if r == col {
				continue
			}
			f := a[r][col] / a[col][col]
			for c := col; c <= k; c++ {
				a[r][c] -= f * a[col][c]
			}
		}
	}
	coef := make([]float64, k)
	for i := range coef {
		coef[i] = a[i][k] / a[i][i]
	}
	return func(ti float64) float64 {
		x := (ti - t0) / scale
		v := 0.0
		for i := k - 1; i >= 0; i-- {
			v = v*x + coef[i]
		}
		return v
	}, nil
}

// series returns the period's values as times (relative, see model) and
// numbers, oldest first, and the evaluation time on the same scale.
func (ev *evaluator) series(c *Call) (t, y []float64, now float64, errv *Value) {
	s, _, errv := ev.window(c, "")
	if errv != nil {
		return nil, nil, 0, errv
	}
	y, errv = floats(c, s)
	if errv != nil {
		return nil, nil, 0, errv
	}
	first := stamp(&s[len(s)-1])
	t = make([]float64, len(s))
	for i := range s {
		t[len(s)-1-i] = stamp(&s[i]) - first + 1
	}
	now = float64(ev.opt.Now.UnixNano())/1e9 - first + 1
	return t, y, now, nil
}

func stamp(s *history.Sample) float64 { return float64(s.Clock) + float64(s.NS)/1e9 }

func clamp(v float64) float64 {
	if math.IsNaN(v) {
		return v
	}
	return math.Max(-unreachable, math.Min(unreachable, v))
}

// hForecast predicts the item's value (or its max, min, delta or avg
// between now and the horizon) with the chosen fit. max, min and avg are
// taken over 1000 steps of the horizon rather than analytically, which
// is exact for lines and close for the other fits.
func hForecast(ev *evaluator, c *Call) Value {
	horizon, errv := ev.numArg(c, 1, "time")
	if errv != nil {
		return *errv
	}
	kind, errv := ev.strArg(c, 2, "linear")
	if errv != nil {
		return *errv
	}
	mode, errv := ev.strArg(c, 3, "value")
	if errv != nil {
		return *errv
	}
	switch mode {
	case "value", "max", "min", "delta", "avg":
	default:
		return callError(c, "invalid mode %q: want value, max, min, delta or avg", mode)
	}
	t, y, now, errv := ev.series(c)
	if errv != nil {
		return *errv
	}
	m, err := fit(kind, t, y)
	if err != nil {
		return callError(c, "%s", err)
	}
	target := now + horizon
	if mode == "value" {
		return checkedNumber(c, m(target))
	}
	const steps = 1000
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for i := 0; i <= steps; i++ {
		v := m(now + horizon*float64(i)/steps)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		if i == 0 || i == steps {
			sum += v / 2 // trapezoid rule: exact for lines
		} else {
			sum += v
		}
	}
	switch mode {
	case "max":
		return checkedNumber(c, hi)
	case "min":
		return checkedNumber(c, lo)
	case "delta":
		return checkedNumber(c, hi-lo)
	}
	if horizon == 0 {
		return checkedNumber(c, m(now))
	}
	return checkedNumber(c, sum/steps)
}

func checkedNumber(c *Call, v float64) Value {
	if math.IsNaN(v) {
		return callError(c, "the fit gives no value there")
	}
	return NumberValue(clamp(v))
}

// hTimeleft is the time in seconds from now until the fitted curve
// reaches the threshold: 0 if the curve is at it now, the largest double
// if it never does (searched up to a century ahead).
func hTimeleft(ev *evaluator, c *Call) Value {
	thr, errv := ev.numArg(c, 1, "threshold")
	if errv != nil {
		return *errv
	}
	kind, errv := ev.strArg(c, 2, "linear")
	if errv != nil {
		return *errv
	}
	if strings.HasPrefix(kind, "polynomial") || kind == "" || kind == "linear" || kind == "exponential" || kind == "logarithmic" || kind == "power" {
		// valid; fit checks the degree
	} else {
		return callError(c, "invalid fit %q", kind)
	}
	t, y, now, errv := ev.series(c)
	if errv != nil {
		return *errv
	}
	m, err := fit(kind, t, y)
	if err != nil {
		return callError(c, "%s", err)
	}
	d0 := m(now) - thr
	if d0 == 0 {
		return NumberValue(0)
	}
	// Walk ahead in growing steps until the sign changes, then bisect.
	const limit = 100 * 365 * 86400.0
	prev, step := 0.0, 1.0
	for step <= limit {
		d := m(now+step) - thr
		if math.IsNaN(d) {
			break
		}
		if d == 0 {
			return NumberValue(step)
		}
		if (d > 0) != (d0 > 0) {
			lo, hi := prev, step
			for i := 0; i < 100 && hi-lo > 1e-6; i++ {
				mid := (lo + hi) / 2
				if dm := m(now+mid) - thr; (dm > 0) == (d0 > 0) {
					lo = mid
				} else {
					hi = mid
				}
			}
			return NumberValue(hi)
		}
		prev, step = step, step*2
	}
	return NumberValue(unreachable)
}
