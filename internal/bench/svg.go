package bench

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strconv"
)

// Plot is a line chart on linear axes from zero, written as a standalone
// SVG document by hand (no dependency): axes with labelled ticks, axis
// titles with units, a legend, and optional vertical marks.
type Plot struct {
	Title  string
	XLabel string // with unit, e.g. "offered load (values/s)"
	YLabel string
	Series []Series
	Marks  []Mark
	Width  int // default 760
	Height int // default 460
}

// Series styles.
const (
	StyleLine  = "line"  // solid line with point markers
	StyleIdeal = "ideal" // dashed dark reference line drawn over the series, no markers
)

// Series is one named line.
type Series struct {
	Name  string
	X, Y  []float64
	Style string // StyleLine (default) or StyleIdeal
	// Color, if set, overrides the palette (one color per target when
	// a plot shows two metrics of each); Dashed draws a dashed line.
	Color  string
	Dashed bool
}

// Mark is a labelled vertical line at X (e.g. the knee).
type Mark struct {
	X     float64
	Label string
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}

// niceStep returns a tick step of 1, 2 or 5 × 10^k giving about n ticks
// over span.
func niceStep(span float64, n int) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// fmtTick prints an axis value compactly: 1500 → 1.5k, 2000000 → 2M.
func fmtTick(v float64) string {
	a := math.Abs(v)
	trim := func(x float64, suffix string) string {
		return strconv.FormatFloat(x, 'f', -1, 64) + suffix
	}
	switch {
	case a >= 1e9:
		return trim(math.Round(v/1e7)/100, "G")
	case a >= 1e6:
		return trim(math.Round(v/1e4)/100, "M")
	case a >= 1e3:
		return trim(math.Round(v/10)/100, "k")
	case a == 0:
		return "0"
	case a < 1:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return trim(math.Round(v*100)/100, "")
}

// SVG renders the plot.
func (p Plot) SVG() []byte {
	w, h := p.Width, p.Height
	if w <= 0 {
		w = 760
	}
	if h <= 0 {
		h = 460
	}
	const left, right, top, bottom = 90, 30, 50, 70
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	xmax, ymax := 0.0, 0.0
	for _, s := range p.Series {
		for i := range s.X {
			if !math.IsNaN(s.X[i]) && !math.IsInf(s.X[i], 0) {
				xmax = math.Max(xmax, s.X[i])
			}
			if !math.IsNaN(s.Y[i]) && !math.IsInf(s.Y[i], 0) {
				ymax = math.Max(ymax, s.Y[i])
			}
		}
	}
	for _, m := range p.Marks {
		xmax = math.Max(xmax, m.X)
	}
	if xmax == 0 {
		xmax = 1
	}
	if ymax == 0 {
		ymax = 1
	}
	xstep, ystep := niceStep(xmax, 6), niceStep(ymax, 6)
	xmax = math.Ceil(xmax/xstep) * xstep
	ymax = math.Ceil(ymax*1.05/ystep) * ystep
	sx := func(x float64) float64 { return left + x/xmax*pw }
	sy := func(y float64) float64 { return top + ph - y/ymax*ph }
	esc := html.EscapeString

	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">
<rect width="100%%" height="100%%" fill="white"/>
<text class="title" x="%d" y="24" text-anchor="middle" font-size="15" font-weight="bold">%s</text>
`, w, h, w, h, w/2, esc(p.Title))
	// Grid and ticks.
	b.WriteString(`<g class="grid" stroke="#e4e4e4" stroke-width="1">` + "\n")
	for x := 0.0; x <= xmax*1.0000001; x += xstep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f"/>`+"\n", sx(x), top, sx(x), float64(top)+ph)
	}
	for y := 0.0; y <= ymax*1.0000001; y += ystep {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", left, sy(y), float64(left)+pw, sy(y))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<g class="axes" stroke="black" stroke-width="1.2"><line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f"/><line x1="%d" y1="%d" x2="%d" y2="%.1f"/></g>`+"\n",
		left, float64(top)+ph, float64(left)+pw, float64(top)+ph, left, top, left, float64(top)+ph)
	b.WriteString(`<g class="ticks" fill="#333">` + "\n")
	for x := 0.0; x <= xmax*1.0000001; x += xstep {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", sx(x), float64(top)+ph+18, fmtTick(x))
	}
	for y := 0.0; y <= ymax*1.0000001; y += ystep {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-8, sy(y)+4, fmtTick(y))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<text class="xlabel" x="%.1f" y="%d" text-anchor="middle" font-size="13">%s</text>`+"\n", float64(left)+pw/2, h-22, esc(p.XLabel))
	fmt.Fprintf(&b, `<text class="ylabel" x="0" y="0" transform="translate(22 %.1f) rotate(-90)" text-anchor="middle" font-size="13">%s</text>`+"\n", float64(top)+ph/2, esc(p.YLabel))
	// Marks.
	for _, m := range p.Marks {
		// The label sits at the bottom of the plot area, away from the
		// legend in the top left corner.
		fmt.Fprintf(&b, `<g class="mark"><line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#888" stroke-dasharray="2 3"/><text x="%.1f" y="%.1f" font-size="11" fill="#444">%s</text></g>`+"\n",
			sx(m.X), top, sx(m.X), float64(top)+ph, sx(m.X)+4, float64(top)+ph-8, esc(m.Label))
	}
	// Series.
	ci := 0
	type legendEntry struct {
		name, color, dash string
		marker            int // -1: none
	}
	// The ideal line is drawn last, on top: a series that follows it
	// exactly would hide it otherwise. The legend keeps the given order.
	legend := make([]legendEntry, len(p.Series))
	order := make([]int, 0, len(p.Series))
	for pass := range 2 {
		for i, s := range p.Series {
			if (s.Style == StyleIdeal) == (pass == 1) {
				order = append(order, i)
			}
		}
	}
	for _, si := range order {
		s := p.Series[si]
		color, dash, width := "#222", ` stroke-dasharray="6 4"`, 1.2
		if s.Style != StyleIdeal {
			color, dash, width = palette[ci%len(palette)], "", 2
			if s.Color != "" {
				color = s.Color
			}
			if s.Dashed {
				dash = ` stroke-dasharray="5 3"`
			}
			ci++
		}
		var pts bytes.Buffer
		for i := range s.X {
			if math.IsNaN(s.Y[i]) || math.IsInf(s.Y[i], 0) {
				continue
			}
			fmt.Fprintf(&pts, "%.1f,%.1f ", sx(s.X[i]), sy(s.Y[i]))
		}
		class := "series"
		if s.Style == StyleIdeal {
			class = "ideal"
		}
		fmt.Fprintf(&b, `<g class="%s"><polyline fill="none" stroke="%s" stroke-width="%.1f"%s points="%s"/>`, class, color, width, dash, bytes.TrimSpace(pts.Bytes()))
		if s.Style != StyleIdeal {
			for i := range s.X {
				if math.IsNaN(s.Y[i]) || math.IsInf(s.Y[i], 0) {
					continue
				}
				marker(&b, ci-1, sx(s.X[i]), sy(s.Y[i]), color)
			}
		}
		b.WriteString("</g>\n")
		mk := -1
		if s.Style != StyleIdeal {
			mk = ci - 1
		}
		legend[si] = legendEntry{s.Name, color, dash, mk}
	}
	// Legend, top left inside the plot area.
	lw := 0
	for _, e := range legend {
		lw = max(lw, len(e.name))
	}
	fmt.Fprintf(&b, `<g class="legend"><rect x="%d" y="%d" width="%d" height="%d" fill="white" fill-opacity="0.9" stroke="#bbb"/>`+"\n",
		left+10, top+8, 46+lw*7, 8+18*len(legend))
	for i, e := range legend {
		y := top + 22 + 18*i
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/><text x="%d" y="%d">%s</text>`+"\n",
			left+18, y-4, left+46, y-4, e.color, e.dash, left+52, y, esc(e.name))
		if e.marker >= 0 {
			marker(&b, e.marker, float64(left+32), float64(y-4), e.color)
		}
	}
	b.WriteString("</g>\n</svg>\n")
	return b.Bytes()
}

// marker draws the k-th series' point marker: filled circle, hollow
// square, filled triangle, hollow circle, so that overlapping series stay
// distinguishable.
func marker(b *bytes.Buffer, k int, x, y float64, color string) {
	switch k % 4 {
	case 0:
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`, x, y, color)
	case 1:
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="10" height="10" fill="none" stroke="%s" stroke-width="1.5"/>`, x-5, y-5, color)
	case 2:
		fmt.Fprintf(b, `<path d="M%.1f %.1fl5 8.5h-10z" fill="%s"/>`, x, y-5.5, color)
	default:
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="6" fill="none" stroke="%s" stroke-width="1.5"/>`, x, y, color)
	}
}
