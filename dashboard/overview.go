package dashboard

import (
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/settleflow/settleflow"
)

// overviewDays is how far back the overview looks.
const overviewDays = 14

type dayStat struct {
	Date    string
	Settled int
	Volume  int64 // cents
}

type statusCount struct {
	Status settleflow.Status
	Count  int
}

type productStat struct {
	Name             string
	Workflows        int
	Target, Achieved float64 // mean, in %
	HasAchieved      bool
	achievedN        int
}

type overviewData struct {
	Days     []dayStat
	Statuses []statusCount
	Products []*productStat
	Chart    template.HTML
	Scanned  int
	Currency string
	Total    int64
}

// overview scans the environment's workflows of the last overviewDays days
// (newest first, stopping at the first older one).
func (h *Handler) overview(w http.ResponseWriter, r *http.Request, s *session) {
	now := h.now()
	from := now.Truncate(24*time.Hour).AddDate(0, 0, -(overviewDays - 1))
	d := overviewData{Currency: "USD"}
	days := map[string]*dayStat{}
	for i := range overviewDays {
		day := from.AddDate(0, 0, i).Format("2006-01-02")
		d.Days = append(d.Days, dayStat{Date: day})
	}
	for i := range d.Days {
		days[d.Days[i].Date] = &d.Days[i]
	}
	statuses := map[settleflow.Status]int{}
	products := map[string]*productStat{}
	for wf, err := range h.opts.Engine.All(r.Context(), settleflow.ListParams{Environment: s.env}) {
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if wf.CreatedAt.Before(from) {
			break
		}
		d.Scanned++
		statuses[wf.Status]++
		p := products[wf.Product]
		if p == nil {
			p = &productStat{Name: wf.Product}
			products[wf.Product] = p
		}
		p.Workflows++
		p.Target += float64(wf.Margin.Target) / 100
		if wf.Margin.Achieved != nil {
			p.Achieved += float64(*wf.Margin.Achieved) / 100
			p.achievedN++
		}
		if wf.Status == settleflow.Settled {
			if ds := days[wf.CreatedAt.UTC().Format("2006-01-02")]; ds != nil {
				ds.Settled++
				ds.Volume += wf.ChargeAmount()
				d.Total += wf.ChargeAmount()
			}
			d.Currency = strings.ToUpper(wf.Quoted.Currency)
		}
	}
	for _, st := range []settleflow.Status{settleflow.Pending, settleflow.Running, settleflow.Settling, settleflow.Settled, settleflow.Failed, settleflow.Canceled} {
		d.Statuses = append(d.Statuses, statusCount{st, statuses[st]})
	}
	for _, p := range products {
		p.Target /= float64(p.Workflows)
		if p.achievedN > 0 {
			p.Achieved /= float64(p.achievedN)
			p.HasAchieved = true
		}
		d.Products = append(d.Products, p)
	}
	slices.SortFunc(d.Products, func(a, b *productStat) int { return strings.Compare(a.Name, b.Name) })
	d.Chart = volumeChart(d.Days)
	h.render(w, r, http.StatusOK, "overview", page{Title: "Overview", Nav: "overview", Data: d})
}

// volumeChart draws settled volume per day as an SVG bar chart. Every value
// written into it is a number or a date the server formatted, so it is safe
// as HTML.
func volumeChart(days []dayStat) template.HTML {
	const width, height, pad, labelH = 700, 180, 4, 34
	var peak int64 = 1
	for _, d := range days {
		peak = max(peak, d.Volume)
	}
	bw := float64(width) / float64(len(days))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="Settled volume per day, last %d days" xmlns="http://www.w3.org/2000/svg">`,
		width, height+labelH, len(days))
	fmt.Fprintf(&b, `<line x1="0" y1="%d" x2="%d" y2="%d" class="axis"/>`, height, width, height)
	for i, d := range days {
		hgt := float64(height-pad) * float64(d.Volume) / float64(peak)
		x := float64(i)*bw + 4
		fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %d settled, %d.%02d</title></rect>`,
			x, float64(height)-hgt, bw-8, hgt, d.Date, d.Settled, d.Volume/100, d.Volume%100)
		if d.Volume > 0 {
			fmt.Fprintf(&b, `<text class="value" x="%.1f" y="%.1f">%d.%02d</text>`, x+(bw-8)/2, max(float64(height)-hgt-4, 12), d.Volume/100, d.Volume%100)
		}
		fmt.Fprintf(&b, `<text class="label" x="%.1f" y="%d">%s</text>`, x+(bw-8)/2, height+16, d.Date[5:])
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // numbers and server-formatted dates only
}
