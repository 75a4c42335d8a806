package expr

// historyFuncs are the functions whose first parameter is an item query,
// with Zabbix 6.0's parameters after the query.
var historyFuncs = map[string]*funcSpec{
	"last":         {history: true, period: perOptional, counts: true, min: 0, max: 1},
	"first":        {history: true, period: perRequired, times: true, min: 1, max: 1},
	"avg":          {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1},
	"min":          {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1},
	"max":          {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1},
	"sum":          {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1},
	"count":        {history: true, period: perRequired, counts: true, times: true, min: 1, max: 3},
	"countunique":  {history: true, period: perRequired, counts: true, times: true, min: 1, max: 3},
	"change":       {history: true, period: perNone, min: 0, max: 0},
	"changecount":  {history: true, period: perRequired, counts: true, times: true, min: 1, max: 2},
	"find":         {history: true, period: perOptional, counts: true, times: true, min: 0, max: 3},
	"nodata":       {history: true, period: perRequired, times: true, min: 1, max: 2},
	"rate":         {history: true, period: perRequired, times: true, min: 1, max: 1},
	"percentile":   {history: true, period: perRequired, counts: true, times: true, min: 2, max: 2},
	"forecast":     {history: true, period: perRequired, counts: true, times: true, min: 2, max: 4},
	"timeleft":     {history: true, period: perRequired, counts: true, times: true, min: 2, max: 3},
	"fuzzytime":    {history: true, period: perRequired, times: true, min: 1, max: 1},
	"logeventid":   {history: true, period: perOptional, counts: true, min: 0, max: 2},
	"logseverity":  {history: true, period: perOptional, counts: true, min: 0, max: 1},
	"logsource":    {history: true, period: perOptional, counts: true, min: 0, max: 2},
	"monoinc":      {history: true, period: perRequired, counts: true, times: true, min: 1, max: 2},
	"monodec":      {history: true, period: perRequired, counts: true, times: true, min: 1, max: 2},
	"kurtosis":     {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1},
	"mad":          {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1},
	"skewness":     {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1},
	"stddevpop":    {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1},
	"stddevsamp":   {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1},
	"sumofsquares": {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1},
	"varpop":       {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1},
	"varsamp":      {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1},
	"trendavg":     {history: true, period: perRequired, times: true, min: 1, max: 1},
	"trendcount":   {history: true, period: perRequired, times: true, min: 1, max: 1},
	"trendmax":     {history: true, period: perRequired, times: true, min: 1, max: 1},
	"trendmin":     {history: true, period: perRequired, times: true, min: 1, max: 1},
	"trendsum":     {history: true, period: perRequired, times: true, min: 1, max: 1},

	// Aggregate functions of calculated items: a query with wildcards
	// or a filter over many items. Parsed so that templates load;
	// evaluated through a Source that implements ManySource.
	"avg_foreach":         {history: true, aggregate: true, period: perRequired, times: true, min: 1, max: 1},
	"count_foreach":       {history: true, aggregate: true, period: perRequired, times: true, min: 1, max: 3},
	"exists_foreach":      {history: true, aggregate: true, period: perNone, min: 0, max: 0},
	"last_foreach":        {history: true, aggregate: true, period: perOptional, times: true, min: 0, max: 1},
	"max_foreach":         {history: true, aggregate: true, period: perRequired, times: true, min: 1, max: 1},
	"min_foreach":         {history: true, aggregate: true, period: perRequired, times: true, min: 1, max: 1},
	"sum_foreach":         {history: true, aggregate: true, period: perRequired, times: true, min: 1, max: 1},
	"bucket_rate_foreach": {history: true, aggregate: true, period: perRequired, times: true, min: 1, max: 2},
	"bucket_percentile":   {history: true, aggregate: true, period: perRequired, times: true, min: 2, max: 2},
	"item_count":          {history: true, aggregate: true, period: perNone, min: 0, max: 0},
}

// mathFuncs are the functions of values: math, bitwise, string,
// date/time and the in/between operators.
var mathFuncs = map[string]*funcSpec{
	"abs": {min: 1, max: 1}, "acos": {min: 1, max: 1}, "asin": {min: 1, max: 1},
	"atan": {min: 1, max: 1}, "atan2": {min: 2, max: 2}, "avg": {min: 1, max: -1},
	"cbrt": {min: 1, max: 1}, "ceil": {min: 1, max: 1}, "cos": {min: 1, max: 1},
	"cosh": {min: 1, max: 1}, "cot": {min: 1, max: 1}, "degrees": {min: 1, max: 1},
	"e": {min: 0, max: 0}, "exp": {min: 1, max: 1}, "expm1": {min: 1, max: 1},
	"floor": {min: 1, max: 1}, "log": {min: 1, max: 1}, "log10": {min: 1, max: 1},
	"max": {min: 1, max: -1}, "min": {min: 1, max: -1}, "mod": {min: 2, max: 2},
	"pi": {min: 0, max: 0}, "power": {min: 2, max: 2}, "radians": {min: 1, max: 1},
	"rand": {min: 0, max: 0}, "round": {min: 2, max: 2}, "signum": {min: 1, max: 1},
	"sin": {min: 1, max: 1}, "sinh": {min: 1, max: 1}, "sqrt": {min: 1, max: 1},
	"sum": {min: 1, max: -1}, "tan": {min: 1, max: 1}, "truncate": {min: 2, max: 2},

	"bitand": {min: 2, max: 2}, "bitor": {min: 2, max: 2}, "bitxor": {min: 2, max: 2},
	"bitnot": {min: 1, max: 1}, "bitlshift": {min: 2, max: 2}, "bitrshift": {min: 2, max: 2},

	"between": {min: 3, max: 3}, "in": {min: 2, max: -1},

	"ascii": {min: 1, max: 1}, "bitlength": {min: 1, max: 1}, "bytelength": {min: 1, max: 1},
	"char": {min: 1, max: 1}, "concat": {min: 2, max: -1}, "insert": {min: 4, max: 4},
	"left": {min: 2, max: 2}, "length": {min: 1, max: 1}, "ltrim": {min: 1, max: 2},
	"mid": {min: 3, max: 3}, "repeat": {min: 2, max: 2}, "replace": {min: 3, max: 3},
	"right": {min: 2, max: 2}, "rtrim": {min: 1, max: 2}, "trim": {min: 1, max: 2},

	"date": {min: 0, max: 0}, "dayofmonth": {min: 0, max: 0}, "dayofweek": {min: 0, max: 0},
	"now": {min: 0, max: 0}, "time": {min: 0, max: 0},
}
