package expr

import (
	"math"
	"strings"
)

// historyFuncs are the functions whose first parameter is an item query,
// with Zabbix 6.0's parameters after the query.
var historyFuncs = map[string]*funcSpec{
	"last":         {history: true, period: perOptional, counts: true, min: 0, max: 1, eval: hLast},
	"first":        {history: true, period: perRequired, times: true, min: 1, max: 1, eval: hFirst},
	"avg":          {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1, eval: aggregate("avg")},
	"min":          {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1, eval: aggregate("min")},
	"max":          {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1, eval: aggregate("max")},
	"sum":          {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1, eval: aggregate("sum")},
	"count":        {history: true, period: perRequired, counts: true, times: true, min: 1, max: 3, eval: hCount},
	"countunique":  {history: true, period: perRequired, counts: true, times: true, min: 1, max: 3, eval: hCountUnique},
	"change":       {history: true, period: perNone, min: 0, max: 0, eval: hChange},
	"changecount":  {history: true, period: perRequired, counts: true, times: true, min: 1, max: 2, eval: hChangeCount},
	"find":         {history: true, period: perOptional, counts: true, times: true, min: 0, max: 3, eval: hFind},
	"nodata":       {history: true, period: perRequired, times: true, min: 1, max: 2, eval: hNodata},
	"rate":         {history: true, period: perRequired, times: true, min: 1, max: 1, eval: hRate},
	"percentile":   {history: true, period: perRequired, counts: true, times: true, min: 2, max: 2, eval: hPercentile},
	"forecast":     {history: true, period: perRequired, counts: true, times: true, min: 2, max: 4, eval: hForecast},
	"timeleft":     {history: true, period: perRequired, counts: true, times: true, min: 2, max: 3, eval: hTimeleft},
	"fuzzytime":    {history: true, period: perRequired, times: true, min: 1, max: 1, eval: hFuzzytime},
	"logeventid":   {history: true, period: perOptional, counts: true, min: 0, max: 2, eval: hLogEventID},
	"logseverity":  {history: true, period: perOptional, counts: true, min: 0, max: 1, eval: hLogSeverity},
	"logsource":    {history: true, period: perOptional, counts: true, min: 0, max: 2, eval: hLogSource},
	"monoinc":      {history: true, period: perRequired, counts: true, times: true, min: 1, max: 2, eval: mono(true)},
	"monodec":      {history: true, period: perRequired, counts: true, times: true, min: 1, max: 2, eval: mono(false)},
	"kurtosis":     {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1, eval: statistic("kurtosis")},
	"mad":          {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1, eval: statistic("mad")},
	"skewness":     {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1, eval: statistic("skewness")},
	"stddevpop":    {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1, eval: statistic("stddevpop")},
	"stddevsamp":   {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1, eval: statistic("stddevsamp")},
	"sumofsquares": {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1, eval: statistic("sumofsquares")},
	"varpop":       {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1, eval: statistic("varpop")},
	"varsamp":      {history: true, period: perRequired, counts: true, times: true, min: 1, max: 1, eval: statistic("varsamp")},
	"trendavg":     {history: true, period: perRequired, times: true, min: 1, max: 1, eval: trend("trendavg")},
	"trendcount":   {history: true, period: perRequired, times: true, min: 1, max: 1, eval: trend("trendcount")},
	"trendmax":     {history: true, period: perRequired, times: true, min: 1, max: 1, eval: trend("trendmax")},
	"trendmin":     {history: true, period: perRequired, times: true, min: 1, max: 1, eval: trend("trendmin")},
	"trendsum":     {history: true, period: perRequired, times: true, min: 1, max: 1, eval: trend("trendsum")},

	// Aggregate functions of calculated items: a query with wildcards
	// or a filter over many items, through a Source that is also an
	// ItemLister (aggregate.go). The *_foreach ones give lists, only
	// for the list functions (listFuncs); bucket_rate_foreach gives
	// bucket bounds and rates, only for histogram_quantile.
	"avg_foreach":         {history: true, aggregate: true, period: perRequired, times: true, min: 1, max: 1, eval: hForeachUnsupported},
	"count_foreach":       {history: true, aggregate: true, period: perRequired, times: true, min: 1, max: 3, eval: hForeachUnsupported},
	"exists_foreach":      {history: true, aggregate: true, period: perNone, min: 0, max: 0, eval: hForeachUnsupported},
	"last_foreach":        {history: true, aggregate: true, period: perOptional, times: true, min: 0, max: 1, eval: hForeachUnsupported},
	"max_foreach":         {history: true, aggregate: true, period: perRequired, times: true, min: 1, max: 1, eval: hForeachUnsupported},
	"min_foreach":         {history: true, aggregate: true, period: perRequired, times: true, min: 1, max: 1, eval: hForeachUnsupported},
	"sum_foreach":         {history: true, aggregate: true, period: perRequired, times: true, min: 1, max: 1, eval: hForeachUnsupported},
	"bucket_rate_foreach": {history: true, aggregate: true, period: perRequired, times: true, min: 1, max: 2, eval: hBucketRateList},
	"bucket_percentile":   {history: true, aggregate: true, period: perRequired, times: true, min: 2, max: 2, eval: hBucketPercentile},
	"item_count":          {history: true, aggregate: true, period: perNone, min: 0, max: 0, eval: hItemCount},
}

// mathFuncs are the functions of values: math, bitwise, string,
// date/time and the in/between operators.
var mathFuncs = map[string]*funcSpec{
	"abs":     {min: 1, max: 1, eval: math1(math.Abs, nil)},
	"acos":    {min: 1, max: 1, eval: math1(math.Acos, unit)},
	"asin":    {min: 1, max: 1, eval: math1(math.Asin, unit)},
	"atan":    {min: 1, max: 1, eval: math1(math.Atan, nil)},
	"atan2":   {min: 2, max: 2, eval: mathN(func(v []float64) (float64, string) { return math.Atan2(v[0], v[1]), "" })},
	"avg":     {min: 1, max: -1, eval: listOr("avg", mathN(func(v []float64) (float64, string) { return meanOf(v), "" }))},
	"cbrt":    {min: 1, max: 1, eval: math1(math.Cbrt, nil)},
	"ceil":    {min: 1, max: 1, eval: math1(math.Ceil, nil)},
	"cos":     {min: 1, max: 1, eval: math1(math.Cos, nil)},
	"cosh":    {min: 1, max: 1, eval: math1(math.Cosh, nil)},
	"cot":     {min: 1, max: 1, eval: math1(func(x float64) float64 { return 1 / math.Tan(x) }, func(x float64) bool { return math.Tan(x) != 0 })},
	"degrees": {min: 1, max: 1, eval: math1(func(x float64) float64 { return x * 180 / math.Pi }, nil)},
	"e":       {min: 0, max: 0, eval: mathN(func([]float64) (float64, string) { return math.E, "" })},
	"exp":     {min: 1, max: 1, eval: math1(math.Exp, nil)},
	"expm1":   {min: 1, max: 1, eval: math1(math.Expm1, nil)},
	"floor":   {min: 1, max: 1, eval: math1(math.Floor, nil)},
	"log":     {min: 1, max: 1, eval: math1(math.Log, positive)},
	"log10":   {min: 1, max: 1, eval: math1(math.Log10, positive)},
	"max":     {min: 1, max: -1, eval: listOr("max", mathN(func(v []float64) (float64, string) { return maxOf(v), "" }))},
	"min":     {min: 1, max: -1, eval: listOr("min", mathN(func(v []float64) (float64, string) { return minOf(v), "" }))},
	"mod": {min: 2, max: 2, eval: mathN(func(v []float64) (float64, string) {
		if v[1] == 0 {
			return 0, "division by zero"
		}
		return math.Mod(v[0], v[1]), ""
	})},
	"pi":      {min: 0, max: 0, eval: mathN(func([]float64) (float64, string) { return math.Pi, "" })},
	"power":   {min: 2, max: 2, eval: mathN(func(v []float64) (float64, string) { return math.Pow(v[0], v[1]), "" })},
	"radians": {min: 1, max: 1, eval: math1(func(x float64) float64 { return x * math.Pi / 180 }, nil)},
	"rand":    {min: 0, max: 0, eval: fnRand},
	"round":   {min: 2, max: 2, eval: mathN(func(v []float64) (float64, string) { return roundTo(v, false) })},
	"signum": {min: 1, max: 1, eval: math1(func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	}, nil)},
	"sin":                {min: 1, max: 1, eval: math1(math.Sin, nil)},
	"sinh":               {min: 1, max: 1, eval: math1(math.Sinh, nil)},
	"sqrt":               {min: 1, max: 1, eval: math1(math.Sqrt, nonNegative)},
	"sum":                {min: 1, max: -1, eval: listOr("sum", mathN(func(v []float64) (float64, string) { return sumOf(v), "" }))},
	"tan":                {min: 1, max: 1, eval: math1(math.Tan, nil)},
	"truncate":           {min: 2, max: 2, eval: mathN(func(v []float64) (float64, string) { return roundTo(v, true) })},
	"bitand":             {min: 2, max: 2, eval: bitwise("bitand")},
	"bitor":              {min: 2, max: 2, eval: bitwise("bitor")},
	"bitxor":             {min: 2, max: 2, eval: bitwise("bitxor")},
	"bitnot":             {min: 1, max: 1, eval: bitwise("bitnot")},
	"bitlshift":          {min: 2, max: 2, eval: bitwise("bitlshift")},
	"bitrshift":          {min: 2, max: 2, eval: bitwise("bitrshift")},
	"between":            {min: 3, max: 3, eval: fnBetween},
	"histogram_quantile": {min: 2, max: -1, eval: fnHistogramQuantile},

	// Of the list of a *_foreach function only (aggregate.go).
	"count":        {min: 1, max: 3, eval: listAggregate("count")},
	"kurtosis":     {min: 1, max: 1, eval: listAggregate("kurtosis")},
	"mad":          {min: 1, max: 1, eval: listAggregate("mad")},
	"skewness":     {min: 1, max: 1, eval: listAggregate("skewness")},
	"stddevpop":    {min: 1, max: 1, eval: listAggregate("stddevpop")},
	"stddevsamp":   {min: 1, max: 1, eval: listAggregate("stddevsamp")},
	"sumofsquares": {min: 1, max: 1, eval: listAggregate("sumofsquares")},
	"varpop":       {min: 1, max: 1, eval: listAggregate("varpop")},
	"varsamp":      {min: 1, max: 1, eval: listAggregate("varsamp")},
	"in":           {min: 2, max: -1, eval: fnIn},
	"ascii":        {min: 1, max: 1, eval: str1(fnASCII)},
	"bitlength":    {min: 1, max: 1, eval: str1(fnBitLength)},
	"bytelength":   {min: 1, max: 1, eval: str1(fnByteLength)},
	"char":         {min: 1, max: 1, eval: str1(fnChar)},
	"concat":       {min: 2, max: -1, eval: fnConcat},
	"insert":       {min: 4, max: 4, eval: fnInsert},
	"left":         {min: 2, max: 2, eval: fnLeft},
	"length":       {min: 1, max: 1, eval: str1(fnLength)},
	"ltrim":        {min: 1, max: 2, eval: trimmer(strings.TrimLeft)},
	"mid":          {min: 3, max: 3, eval: fnMid},
	"repeat":       {min: 2, max: 2, eval: fnRepeat},
	"replace":      {min: 3, max: 3, eval: fnReplace},
	"right":        {min: 2, max: 2, eval: fnRight},
	"rtrim":        {min: 1, max: 2, eval: trimmer(strings.TrimRight)},
	"trim":         {min: 1, max: 2, eval: trimmer(strings.Trim)},
	"date":         {min: 0, max: 0, eval: fnDate},
	"dayofmonth":   {min: 0, max: 0, eval: fnDayOfMonth},
	"dayofweek":    {min: 0, max: 0, eval: fnDayOfWeek},
	"now":          {min: 0, max: 0, eval: fnNow},
	"time":         {min: 0, max: 0, eval: fnTime},
}
