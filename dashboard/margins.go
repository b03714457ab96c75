package dashboard

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/settleflow/settleflow"
)

// The Margins page: the margin achieved by each product on each day of a
// date range (UTC), as a chart the server draws (inline SVG, laid out here
// and written by the page's template, so every name in it is escaped), and
// each product's totals over the range. One Engine.Margins call groups the
// range by product; one more per product with Settled workflows in it
// groups that product's by day.

// Date ranges of the Margins page.
const (
	marginsDefaultDays = 30
	marginsMaxDays     = 366
	dateLayout         = "2006-01-02"
)

// The chart's geometry, in SVG user units (the SVG scales to the page).
const (
	chartW, chartH   = 900, 380
	plotL, plotR     = 68.0, 884.0 // the plot area's edges
	plotT, plotB     = 16.0, 320.0
	chartColors      = 8  // classes c0…c7 in margins.css
	chartMaxXLabels  = 10 // day labels on the x axis, at most
	chartMinTickStep = 100
)

type marginsData struct {
	// From and To are the form's values (the range's first and last day,
	// both included).
	From, To string
	Days     int
	// Invalid is set when the form was refused: no report then.
	Invalid bool
	Chart   *marginChart
	Rows    []marginProduct
	Total   settleflow.MarginRow
	// Idle are the products with nothing Settled in the range.
	Idle []string
}

// marginProduct is a product's totals over the range.
type marginProduct struct {
	settleflow.MarginRow
	// Target is the product's target margin; nil for a product no longer
	// registered (it is in the table, not in the chart).
	Target *settleflow.BasisPoints
	// Class is its series' colour class; "" when it is not charted.
	Class string
}

type marginChart struct {
	W, H                     int
	Left, Right, Top, Bottom string
	MidX, MidY               string // for the axis titles
	XLabelY, XTitleY         string
	// Loss is set when the y axis goes below 0 %: the area under the 0 %
	// line, from ZeroY, LossH high, is shaded.
	Loss         bool
	ZeroY, LossH string
	PlotW        string
	Label        string // the SVG's accessible name
	YTicks       []chartTick
	XTicks       []chartTick
	Series       []chartSeries
}

// chartTick is a gridline with its label: horizontal (Pos is y; BP its
// margin) or vertical (Pos is x).
type chartTick struct {
	Pos   string
	Label string
	BP    int64
	Zero  bool
}

type chartSeries struct {
	Product string
	Class   string
	// Points is the polyline's points attribute: one x,y per day with a
	// margin, in day order.
	Points string
	Dots   []chartDot
	// TargetY is where the product's target margin line is drawn.
	Target  settleflow.BasisPoints
	TargetY string
	// Achieved is the margin over the whole range, nil if nothing was kept.
	Achieved *settleflow.BasisPoints
}

type chartDot struct {
	X, Y      string
	Day       string
	Margin    settleflow.BasisPoints
	Workflows int64
	Kept      int64 // charged less refunded, minor units
}

// marginsRange reads the form: the first and last day (UTC), by default the
// last marginsDefaultDays days up to today.
func marginsRange(from, to string, today time.Time) (first, last time.Time, msg string) {
	last = today
	if to != "" {
		t, err := time.Parse(dateLayout, to)
		if err != nil {
			return first, last, fmt.Sprintf("The end date %q is not a date: write it as YYYY-MM-DD, such as %s.", to, today.Format(dateLayout))
		}
		last = t
	}
	first = last.AddDate(0, 0, -(marginsDefaultDays - 1))
	if from != "" {
		t, err := time.Parse(dateLayout, from)
		if err != nil {
			return first, last, fmt.Sprintf("The start date %q is not a date: write it as YYYY-MM-DD, such as %s.", from, today.Format(dateLayout))
		}
		first = t
	}
	switch {
	case last.Before(first):
		return first, last, "The start date must not be after the end date."
	case last.Sub(first) >= marginsMaxDays*24*time.Hour:
		return first, last, fmt.Sprintf("The range holds more than %d days: narrow it.", marginsMaxDays)
	}
	return first, last, ""
}

func (h *Handler) marginsPage(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	from, to := strings.TrimSpace(q.Get("from")), strings.TrimSpace(q.Get("to"))
	today := h.now().Truncate(24 * time.Hour)
	first, last, msg := marginsRange(from, to, today)
	p := page{Title: "Margins", Nav: "margins"}
	d := marginsData{From: from, To: to}
	if msg != "" {
		d.Invalid = true
		p.Error, p.Data = msg, d
		h.render(w, r, http.StatusBadRequest, "margins", p)
		return
	}
	d.From, d.To = first.Format(dateLayout), last.Format(dateLayout)
	d.Days = int(last.Sub(first)/(24*time.Hour)) + 1
	err := h.margins(r, s.env, first, last, &d)
	var inv *settleflow.InvalidError
	switch {
	case errors.As(err, &inv):
		d.Invalid = true
		p.Error, p.Data = inv.Message, d
		h.render(w, r, http.StatusBadRequest, "margins", p)
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	p.Data = d
	h.render(w, r, http.StatusOK, "margins", p)
}

// margins fills d with the report of env from first to last (UTC days,
// both included).
func (h *Handler) margins(r *http.Request, env settleflow.Environment, first, last time.Time, d *marginsData) error {
	ctx, e := r.Context(), h.opts.Engine
	after, before := first, last.AddDate(0, 0, 1)
	byProduct, err := e.Margins(ctx, settleflow.MarginsParams{Environment: env, GroupBy: settleflow.MarginsByProduct,
		CreatedAfter: after, CreatedBefore: before})
	if err != nil {
		return err
	}
	d.Total = byProduct.Total
	rows := map[string]int{}
	for _, row := range byProduct.Data {
		rows[row.Key] = len(d.Rows)
		d.Rows = append(d.Rows, marginProduct{MarginRow: row})
	}
	var series []chartSeries
	var days [][]settleflow.MarginRow
	for _, info := range e.Products() {
		i, ok := rows[info.Name]
		if !ok {
			d.Idle = append(d.Idle, info.Name)
			continue
		}
		target := info.TargetMargin
		d.Rows[i].Target = &target
		byDay, err := e.Margins(ctx, settleflow.MarginsParams{Environment: env, GroupBy: settleflow.MarginsByDay,
			CreatedAfter: after, CreatedBefore: before, Product: info.Name})
		if err != nil {
			return err
		}
		class := seriesClass(len(series))
		d.Rows[i].Class = class
		series = append(series, chartSeries{Product: info.Name, Class: class, Target: target, Achieved: d.Rows[i].Margin})
		days = append(days, byDay.Data)
	}
	if len(series) > 0 {
		d.Chart = drawMargins(first, d.Days, series, days)
		d.Chart.Label = fmt.Sprintf("Margin by product per day (UTC), %s to %s", d.From, d.To)
	}
	return nil
}

// seriesClass is the i-th series' classes: one of chartColors colours, and
// past them a dash pattern too, so that no two series look alike.
func seriesClass(i int) string {
	c := fmt.Sprintf("c%d", i%chartColors)
	if k := i / chartColors % 3; k > 0 {
		c += fmt.Sprintf(" d%d", k)
	}
	return c
}

// drawMargins lays out the chart of n days from first: series[i]'s points
// are days[i]'s rows with a margin, on a y axis (margin, %) that holds
// every point, every target and 0.
func drawMargins(first time.Time, n int, series []chartSeries, days [][]settleflow.MarginRow) *marginChart {
	lo, hi := int64(0), int64(0)
	for i, s := range series {
		lo, hi = min(lo, int64(s.Target)), max(hi, int64(s.Target))
		for _, row := range days[i] {
			if row.Margin != nil {
				lo, hi = min(lo, int64(*row.Margin)), max(hi, int64(*row.Margin))
			}
		}
	}
	step := tickStep(hi - lo)
	lo = floorTo(lo, step)
	hi = -floorTo(-hi, step)
	if hi == lo {
		hi = lo + step
	}
	y := func(bp int64) float64 { return plotT + (plotB-plotT)*float64(hi-bp)/float64(hi-lo) }
	x := func(i int) float64 {
		if n == 1 {
			return (plotL + plotR) / 2
		}
		return plotL + (plotR-plotL)*float64(i)/float64(n-1)
	}
	c := &marginChart{W: chartW, H: chartH, Left: num(plotL), Right: num(plotR), Top: num(plotT), Bottom: num(plotB),
		MidX: num((plotL + plotR) / 2), MidY: num(-(plotT + plotB) / 2), XLabelY: num(plotB + 18), XTitleY: num(plotB + 44),
		Loss: lo < 0, ZeroY: num(y(0)), LossH: num(plotB - y(0)), PlotW: num(plotR - plotL)}
	for v := lo; v <= hi; v += step {
		c.YTicks = append(c.YTicks, chartTick{Pos: num(y(v)), Label: percent(v), BP: v, Zero: v == 0})
	}
	stride := (n + chartMaxXLabels - 1) / chartMaxXLabels
	index := map[string]int{}
	for i := range n {
		day := first.AddDate(0, 0, i).Format(dateLayout)
		index[day] = i
		if i%stride == 0 {
			c.XTicks = append(c.XTicks, chartTick{Pos: num(x(i)), Label: day[5:]})
		}
	}
	for i, s := range series {
		var pts []string
		for _, row := range days[i] {
			at, ok := index[row.Key]
			if !ok || row.Margin == nil {
				continue
			}
			px, py := num(x(at)), num(y(int64(*row.Margin)))
			pts = append(pts, px+","+py)
			s.Dots = append(s.Dots, chartDot{X: px, Y: py, Day: row.Key, Margin: *row.Margin, Workflows: row.Workflows,
				Kept: row.Charged.Amount - row.Refunded.Amount})
		}
		s.Points = strings.Join(pts, " ")
		s.TargetY = num(y(int64(s.Target)))
		c.Series = append(c.Series, s)
	}
	return c
}

// tickStep is the gridlines' spacing for a span of basis points: 1, 2, 2.5
// or 5 times a power of ten, for about five of them, at least 1 %.
func tickStep(span int64) int64 {
	raw := float64(span) / 5
	for mag := int64(chartMinTickStep); ; mag *= 10 {
		for _, f := range []int64{1, 2, 5} {
			if s := mag * f; float64(s) >= raw {
				return s
			}
			if f == 2 && mag >= 1000 && float64(mag*25/10) >= raw {
				return mag * 25 / 10
			}
		}
		if mag > math.MaxInt64/100 {
			return mag
		}
	}
}

// floorTo is v rounded down to a multiple of step.
func floorTo(v, step int64) int64 {
	q := v / step
	if v%step != 0 && v < 0 {
		q--
	}
	return q * step
}

// percent writes basis points as a percentage without useless zeros:
// 2500 → "25%", -1250 → "-12.5%".
func percent(bp int64) string {
	s := strconv.FormatFloat(float64(bp)/100, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
