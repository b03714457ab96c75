package dashboard

import (
	"context"
	"html"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/fundstest"
)

// dayClock is the margins fixture's engine clock: real time shifted so
// that it reads noon (UTC) of a past day when set, and moves on from there.
// It only moves forward.
type dayClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *dayClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *dayClock) set(t time.Time) {
	c.mu.Lock()
	c.offset = time.Until(t)
	c.mu.Unlock()
}

// marginsFixture is a dashboard whose engine settled, in test mode:
//
//   - item (target 25 %, quoted 1.34, cost 0.80: a margin of 40.29 %): two
//     workflows three days ago, one today;
//   - lossy (target 20 %, quoted 1.25, cost 1.50: −20 %): one three days
//     ago, one yesterday, one today, refunded 0.25 (kept 1.00: −50 %);
//   - idle (target 30 %): none.
//
// Each was created at noon (UTC) of its day, on the engine's clock.
type marginsFixture struct {
	*fixture
	today time.Time // 00:00 UTC
	days  [3]string // three days ago, yesterday, today: YYYY-MM-DD
}

func newMarginsFixture(t *testing.T) *marginsFixture {
	t.Helper()
	clock := &dayClock{}
	f := newFixtureWith(t, func(o *settleflow.Options) {
		fs := fundstest.New()
		fs.LiveUnfunded = true
		o.Settler = fs
		o.Clock = clock
		o.PollInterval = 20 * time.Millisecond
		o.SettlementPollInterval = 20 * time.Millisecond
		o.FundsPollInterval = 20 * time.Millisecond
		for _, p := range []struct {
			name         string
			target, cost int64
		}{{"lossy", 2000, 150}, {"idle", 3000, 10}} {
			if err := settleflow.Register(o.Products, settleflow.Product[item]{
				Name: p.name, Price: settleflow.Price{TargetMargin: settleflow.BasisPoints(p.target)},
				Estimate: func(item) (int64, error) { return 100, nil },
				Execute: func(context.Context, item) (settleflow.Execution, error) {
					return settleflow.Execution{ActualCost: p.cost}, nil
				},
			}); err != nil {
				t.Fatal(err)
			}
		}
	})
	ctx := context.Background()
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	m := &marginsFixture{fixture: f, today: time.Now().UTC().Truncate(24 * time.Hour)}
	for i, ago := range []int{3, 1, 0} {
		m.days[i] = m.today.AddDate(0, 0, -ago).Format(dateLayout)
	}
	at := func(ago int) { clock.set(m.today.AddDate(0, 0, -ago).Add(12 * time.Hour)) }
	at(3)
	m.settledOf("item", "A1")
	m.settledOf("item", "A2")
	m.settledOf("lossy", "B1")
	at(1)
	m.settledOf("lossy", "B2")
	at(0)
	m.settledOf("item", "A3")
	b3 := m.settledOf("lossy", "B3")
	rf, _, err := f.engine.Refund(ctx, settleflow.RefundParams{Environment: settleflow.Test, WorkflowID: b3.ID, Amount: 25})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		rs := f.refunds(settleflow.Test, b3.ID)
		if len(rs) == 1 && rs[0].Status == settleflow.RefundSucceeded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("refund %s did not succeed: %+v", rf.ID, rs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return m
}

// settledOf creates a test workflow of product and waits until it is
// Settled, checking it was created on the engine's day.
func (m *marginsFixture) settledOf(product, ref string) *settleflow.Workflow {
	m.t.Helper()
	ctx := context.Background()
	wf, _, err := m.engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test, Product: product, CustomerID: "cus_margins",
		Payload: []byte(`{"ref":"` + ref + `"}`)})
	if err != nil {
		m.t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := m.engine.Fetch(ctx, settleflow.Test, wf.ID)
		if err != nil {
			m.t.Fatal(err)
		}
		if got.Status == settleflow.Settled {
			return got
		}
		if got.Status.Terminal() || time.Now().After(deadline) {
			m.t.Fatalf("workflow %s of %s is %s, want Settled", wf.ID, product, got.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var (
	seriesRE = regexp.MustCompile(`(?s)<g class="series [^"]*" data-product="([^"]*)">(.*?)</g>`)
	pointsRE = regexp.MustCompile(`<polyline class="line" points="([^"]*)"`)
	dotRE    = regexp.MustCompile(`<circle class="dot" cx="([^"]+)" cy="([^"]+)" r="4" data-day="([^"]+)" data-bp="(-?\d+)">`)
	gridRE   = regexp.MustCompile(`<line class="(?:grid|zero)" data-bp="(-?\d+)" x1="[^"]+" y1="([^"]+)"[^>]*/><text class="ytick"[^>]*>([^<]*)</text>`)
	targetRE = regexp.MustCompile(`<line class="target" x1="[^"]+" y1="([^"]+)" x2="[^"]+" y2="[^"]+" data-bp="(-?\d+)">`)
)

type chartPoint struct {
	x, y float64
	day  string
	bp   int64
}

type parsedChart struct {
	order   []string                // products, in the chart's order
	points  map[string]int          // product → points of its polyline
	dots    map[string][]chartPoint // product → its dots
	targets map[string]float64      // product → y of its target line
	grid    map[int64]float64       // gridline margin → y
	zeroY   float64
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// parseChart reads the Margins chart out of a page.
func parseChart(t *testing.T, body string) parsedChart {
	t.Helper()
	c := parsedChart{points: map[string]int{}, dots: map[string][]chartPoint{}, targets: map[string]float64{}, grid: map[int64]float64{}}
	for _, m := range gridRE.FindAllStringSubmatch(body, -1) {
		bp, _ := strconv.ParseInt(m[1], 10, 64)
		c.grid[bp] = atof(t, m[2])
		if m[3] != percent(bp) {
			t.Errorf("the gridline at %d bp is labelled %q", bp, m[3])
		}
	}
	y0, ok := c.grid[0]
	if !ok || len(c.grid) < 2 {
		t.Fatalf("the chart's gridlines %v lack 0 %% or another", c.grid)
	}
	c.zeroY = y0
	for _, s := range seriesRE.FindAllStringSubmatch(body, -1) {
		name := html.UnescapeString(s[1])
		c.order = append(c.order, name)
		pm := pointsRE.FindStringSubmatch(s[2])
		if pm == nil {
			t.Fatalf("series %s has no polyline", name)
		}
		c.points[name] = len(strings.Fields(pm[1]))
		for _, d := range dotRE.FindAllStringSubmatch(s[2], -1) {
			bp, _ := strconv.ParseInt(d[4], 10, 64)
			c.dots[name] = append(c.dots[name], chartPoint{atof(t, d[1]), atof(t, d[2]), d[3], bp})
		}
		if tm := targetRE.FindStringSubmatch(s[2]); tm != nil {
			c.targets[name] = atof(t, tm[1])
		}
	}
	return c
}

// yOf is where the gridlines put a margin of bp: the chart's scale, read
// off the chart itself.
func (c parsedChart) yOf(bp int64) float64 {
	var b1 int64
	var y1 float64
	for b, y := range c.grid {
		if b != 0 {
			b1, y1 = b, y
			break
		}
	}
	return c.zeroY + (y1-c.zeroY)*float64(bp)/float64(b1)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 0.11 }

// The Margins page: a series per product with Settled workflows in the
// range, a point per day with a margin where the axes say, the target
// lines, a legend and the products' totals.
func TestMarginsPage(t *testing.T) {
	m := newMarginsFixture(t)
	csrf := m.signIn()
	if b := m.checkPage("/dashboard/", csrf); !strings.Contains(b, `href="/dashboard/margins"`) {
		t.Fatal("the navigation has no Margins entry")
	}
	body := m.checkPage("/dashboard/margins", csrf)
	// The default range: the last 30 days, today included.
	from, to := m.today.AddDate(0, 0, -29).Format(dateLayout), m.days[2]
	for _, want := range []string{`name="from" id="margins-from" value="` + from + `"`, `name="to" id="margins-to" value="` + to + `"`,
		`aria-current="page">Margins</a>`, `href="/dashboard/static/margins.css"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the Margins page lacks %q", want)
		}
	}
	c := parseChart(t, body)
	if strings.Join(c.order, ",") != "item,lossy" {
		t.Fatalf("series %v; want item and lossy (idle has nothing Settled)", c.order)
	}
	want := map[string][]chartPoint{
		"item":  {{day: m.days[0], bp: 4029}, {day: m.days[2], bp: 4029}},
		"lossy": {{day: m.days[0], bp: -2000}, {day: m.days[1], bp: -2000}, {day: m.days[2], bp: -5000}},
	}
	// x: 30 days from plotL to plotR; three days ago is the 27th.
	xOf := map[string]float64{m.days[0]: 68 + 816*26/29.0, m.days[1]: 68 + 816*28/29.0, m.days[2]: 884}
	for name, ws := range want {
		if c.points[name] != len(ws) || len(c.dots[name]) != len(ws) {
			t.Errorf("%s: %d points, %d dots; want %d", name, c.points[name], len(c.dots[name]), len(ws))
			continue
		}
		for i, w := range ws {
			got := c.dots[name][i]
			if got.day != w.day || got.bp != w.bp || !near(got.y, c.yOf(w.bp)) || !near(got.x, xOf[w.day]) {
				t.Errorf("%s, point %d: %+v; want day %s, %d bp at x %.1f, y %.1f", name, i, got, w.day, w.bp, xOf[w.day], c.yOf(w.bp))
			}
			if (w.bp < 0) != (got.y > c.zeroY) {
				t.Errorf("%s, %s: y %.1f is on the wrong side of 0 %% (y %.1f)", name, w.day, got.y, c.zeroY)
			}
		}
	}
	for name, bp := range map[string]int64{"item": 2500, "lossy": 2000} {
		if y, ok := c.targets[name]; !ok || !near(y, c.yOf(bp)) {
			t.Errorf("%s's target line at y %.1f (present: %v); want %.1f", name, y, ok, c.yOf(bp))
		}
	}
	for _, want := range []string{
		`<li data-product="item">`, `<b>item</b> <small>40.29% over the range; target 25.00% (dashed)</small>`,
		`<b>lossy</b> <small>-28.57% over the range; target 20.00% (dashed)</small>`,
		`<p class="hint" id="margins-idle">Nothing Settled in this range for idle.</p>`,
		`<tr data-product="item"><td>item</td><td class="num">3</td><td class="num">USD 4.02</td><td class="num">USD 0.00</td><td class="num">USD 2.40</td><td class="num">40.29%</td><td class="num">25.00%</td></tr>`,
		`<tr data-product="lossy"><td>lossy</td><td class="num">3</td><td class="num">USD 3.75</td><td class="num">USD 0.25</td><td class="num">USD 4.50</td><td class="num">-28.57%</td><td class="num">20.00%</td></tr>`,
		`<tr id="margins-total"><td><b>Total</b></td><td class="num">6</td><td class="num">USD 7.77</td><td class="num">USD 0.25</td><td class="num">USD 6.90</td><td class="num">8.24%</td>`,
		">Margin (%)</text>", ">Day (UTC, month-day)</text>", ">0%</text>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the Margins page lacks %q", want)
		}
	}
	if strings.Contains(body, `data-product="idle"`) {
		t.Error("idle, with nothing Settled, is charted or in the table")
	}

	// Yesterday and today only: two days, from the left edge to the right.
	body = m.checkPage("/dashboard/margins?from="+m.days[1]+"&to="+m.days[2], csrf)
	c = parseChart(t, body)
	if c.points["item"] != 1 || c.points["lossy"] != 2 || len(c.dots["lossy"]) != 2 ||
		!near(c.dots["lossy"][0].x, 68) || !near(c.dots["lossy"][1].x, 884) || !near(c.dots["item"][0].x, 884) {
		t.Errorf("two days: points %v, dots %v", c.points, c.dots)
	}
	if !strings.Contains(body, `<tr data-product="item"><td>item</td><td class="num">1</td><td class="num">USD 1.34</td>`) {
		t.Error("two days: the item row does not count today's workflow only")
	}
	// One day: the point in the middle; item has nothing then.
	body = m.checkPage("/dashboard/margins?from="+m.days[1]+"&to="+m.days[1], csrf)
	c = parseChart(t, body)
	if strings.Join(c.order, ",") != "lossy" || len(c.dots["lossy"]) != 1 || !near(c.dots["lossy"][0].x, 476) ||
		!strings.Contains(body, "Nothing Settled in this range for idle, item.") {
		t.Errorf("yesterday only: series %v, dots %v", c.order, c.dots)
	}
}

// Nothing Settled in the range, or in the other environment: the empty
// state, no chart.
func TestMarginsPageEmpty(t *testing.T) {
	m := newFixture(t)
	csrf := m.signIn()
	for _, path := range []string{"/dashboard/margins", "/dashboard/margins?from=2020-01-01&to=2020-01-31"} {
		body := m.checkPage(path, csrf)
		if !strings.Contains(body, `id="margins-empty"`) || strings.Contains(body, "<svg") || strings.Contains(body, `id="margins-table"`) {
			t.Errorf("%s: no empty state, or a chart or table without data", path)
		}
	}
	if !strings.Contains(m.checkPage("/dashboard/margins?from=2020-01-01&to=2020-01-31", csrf), "in test mode from 2020-01-01 to 2020-01-31") {
		t.Error("the empty state does not say which range and environment")
	}
	// A live session sees live workflows only: none here.
	if r := m.do("POST", "/dashboard/env", url.Values{"csrf": {csrf}, "env": {"live"}}); r.status != http.StatusSeeOther {
		t.Fatalf("switch: %d", r.status)
	}
	if body := m.checkPage("/dashboard/margins", csrf); !strings.Contains(body, "in live mode") || !strings.Contains(body, `id="margins-empty"`) {
		t.Error("live: no empty state")
	}
}

// A bad range is refused with 400 and a sentence saying what is wrong,
// the operator's input escaped.
func TestMarginsPageBadRange(t *testing.T) {
	m := newFixture(t)
	csrf := m.signIn()
	for q, want := range map[string]string{
		"from=yesterday":                    `The start date &#34;yesterday&#34; is not a date: write it as YYYY-MM-DD`,
		"to=2024-02-30":                     `The end date &#34;2024-02-30&#34; is not a date`,
		"from=2024-03-02&to=2024-03-01":     "The start date must not be after the end date.",
		"from=2023-01-01&to=2024-01-02":     "The range holds more than 366 days: narrow it.",
		"from=0001-01-01&to=9999-12-31":     "The range holds more than 366 days: narrow it.",
		"from=%3Cscript%3Ealert(1)%3C/x%3E": `The start date &#34;&lt;script&gt;alert(1)&lt;/x&gt;&#34; is not a date`,
	} {
		r := m.do("GET", "/dashboard/margins?"+q, nil)
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, `<p class="error" role="alert">`+want) {
			t.Errorf("%s: %d; want 400 saying %q\n%s", q, r.status, want, r.body)
		}
		m.checkHTML(q, r.body, csrf)
		if strings.Contains(r.body, "<script>alert") || strings.Contains(r.body, "<svg") || strings.Contains(r.body, `id="margins-empty"`) {
			t.Errorf("%s: unescaped input, or a report for a refused range\n%s", q, r.body)
		}
	}
	// 366 days are fine.
	if r := m.do("GET", "/dashboard/margins?from=2023-01-01&to=2024-01-01", nil); r.status != http.StatusOK {
		t.Errorf("366 days: %d", r.status)
	}
}

func TestTickStep(t *testing.T) {
	for _, c := range []struct{ span, step int64 }{
		{0, 100}, {400, 100}, {501, 200}, {1000, 200}, {2400, 500}, {4000, 1000}, {9029, 2000}, {11000, 2500}, {12600, 5000},
		{49000, 10000}, {10_000_000, 2_000_000},
	} {
		if got := tickStep(c.span); got != c.step {
			t.Errorf("tickStep(%d) = %d, want %d", c.span, got, c.step)
		}
	}
	for _, c := range []struct {
		v, step, want int64
	}{{-5000, 2000, -6000}, {-6000, 2000, -6000}, {4029, 2000, 4000}, {0, 500, 0}, {-1, 100, -100}} {
		if got := floorTo(c.v, c.step); got != c.want {
			t.Errorf("floorTo(%d, %d) = %d, want %d", c.v, c.step, got, c.want)
		}
	}
	for bp, want := range map[int64]string{0: "0%", 2500: "25%", -1250: "-12.5%", 4029: "40.29%", -600000: "-6000%"} {
		if got := percent(bp); got != want {
			t.Errorf("percent(%d) = %q, want %q", bp, got, want)
		}
	}
}
