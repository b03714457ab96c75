package main

import (
	"context"
	"errors"
	"hash/fnv"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/invopop/jsonschema"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/criteria"
)

// The demo products of the pricing models beyond fixed (issue 26), one per
// model. Their prices and costs are written out below so that a reader (and
// outcome_e2e_test.go) can work out every charge by hand:
//
//   - document-extraction, capped: estimate 0.10 + 0.04 per page (+ 0.02 per
//     page for OCR unless the document is clean); target margin 30 %, so
//     the quote (the cap) is ceil(estimate / 0.7), at least 0.25. It
//     charges its actual cost + 30 %, at least 0.25, at most the quote.
//     Margin floor 10 %: a damaged document, whose pages are read three
//     times, spends past the budget and is stopped (margin_floor_exceeded,
//     nothing charged). It reports its spend as it goes (ReportSpend).
//   - ticket-resolution, success_fee: estimate 0.20 + 0.01 per 200
//     characters of the question; target margin 60 %, at least 1.00. It
//     charges the quote if the result has status "resolved" and confidence
//     ≥ 0.8, else nothing (then the workflow is Settled with nothing sent
//     to the chain). Questions about one known topic resolve with
//     confidence; about several, with less; about none, they are escalated.
//   - lead-enrichment, hybrid with a base share of 30 %: estimate 0.23 (a
//     model call and the first two lookups of a provider waterfall); target
//     margin 40 %. It charges the quote if the lead is found, else the base
//     ceil(quote × 0.3). Margin floor 20 %: it reads its budget
//     (SpendBudget) and queries the next provider only while that fits.
//     Business addresses are found (by the first provider when the company
//     is given, the second otherwise); personal mail addresses never are.

// Criteria of the success-priced products.
var (
	resolutionCriteria = criteria.MustParse(`{"type":"all_of","criteria":[
		{"type":"exact","path":"/status","value":"resolved"},
		{"type":"numeric_threshold","path":"/confidence","op":">=","value":0.8}]}`)
	leadCriteria = criteria.MustParse(`{"type":"all_of","criteria":[
		{"type":"exact","path":"/found","value":true},
		{"type":"json_schema","path":"/contact","schema":{"type":"object","required":["name","title","company"]}}]}`)
)

// document-extraction.

type extraction struct {
	DocumentID string `json:"documentId" jsonschema:"required,minLength=1,maxLength=100,description=The document's id in your archive."`
	Pages      int    `json:"pages" jsonschema:"required,minimum=1,maximum=500,description=How many pages the document has."`
	Quality    string `json:"quality,omitempty" jsonschema:"enum=clean,enum=scanned,enum=damaged,description=clean (born digital; the default)\\, scanned (read once by OCR) or damaged (pages read three times: spends past the margin floor's budget and is stopped)."`
}

func (x extraction) Validate() error {
	switch n := utf8.RuneCountInString(x.DocumentID); {
	case n == 0:
		return &settleflow.FieldError{Field: "documentId", Message: "is required"}
	case n > 100:
		return &settleflow.FieldError{Field: "documentId", Message: "has at most 100 characters"}
	case x.Pages < 1 || x.Pages > 500:
		return &settleflow.FieldError{Field: "pages", Message: "must be between 1 and 500"}
	}
	switch x.Quality {
	case "", "clean", "scanned", "damaged":
		return nil
	}
	return &settleflow.FieldError{Field: "quality", Message: "must be clean, scanned or damaged"}
}

// Costs of document-extraction, in cents.
const (
	extractionSetup      = 10 // compute: one job on the extraction workers
	extractionPageEst    = 4  // estimate per page: model and compute
	extractionOCREst     = 2  // estimate per page read by OCR, once
	extractionCompute    = 1  // per page: compute
	extractionOCR        = 2  // per page and OCR pass
	extractionModelClean = 2  // per page of a clean document: model
	extractionModelOCR   = 4  // per page and pass of a scanned one: model (OCR text is longer)
	extractionBatch      = 50 // pages per model request
)

func extractionEstimate(x extraction) (int64, error) {
	per := int64(extractionPageEst)
	if x.Quality == "scanned" || x.Quality == "damaged" {
		per += extractionOCREst
	}
	return extractionSetup + per*int64(x.Pages), nil
}

// extractionPasses is how many times each page is read by OCR.
func extractionPasses(quality string) int {
	switch quality {
	case "scanned":
		return 1
	case "damaged":
		return 3
	}
	return 0
}

func extract(ctx context.Context, x extraction) (settleflow.Execution, error) {
	if err := settleflow.ReportSpend(ctx, settleflow.CostItem{Category: settleflow.CostCompute, Provider: "extraction-workers", Units: 1, Amount: extractionSetup}); err != nil {
		return settleflow.Execution{}, err
	}
	passes := extractionPasses(x.Quality)
	for start := 0; start < x.Pages; start += extractionBatch {
		n := int64(min(extractionBatch, x.Pages-start))
		if err := pause(ctx, 20*time.Millisecond); err != nil {
			return settleflow.Execution{}, err
		}
		compute := settleflow.CostItem{Category: settleflow.CostCompute, Provider: "extraction-workers", Units: n, Amount: extractionCompute * n}
		if passes == 0 {
			model := settleflow.CostItem{Category: settleflow.CostModel, Provider: "vision-model", Units: 800 * n, Amount: extractionModelClean * n}
			if err := settleflow.ReportSpend(ctx, compute, model); err != nil {
				return settleflow.Execution{}, err
			}
			continue
		}
		if err := settleflow.ReportSpend(ctx, compute); err != nil {
			return settleflow.Execution{}, err
		}
		for range passes {
			ocr := settleflow.CostItem{Category: settleflow.CostTools, Provider: "ocr-service", Units: n, Amount: extractionOCR * n}
			model := settleflow.CostItem{Category: settleflow.CostModel, Provider: "vision-model", Units: 1600 * n, Amount: extractionModelOCR * n}
			if err := settleflow.ReportSpend(ctx, ocr, model); err != nil {
				return settleflow.Execution{}, err
			}
		}
	}
	quality := x.Quality
	if quality == "" {
		quality = "clean"
	}
	return settleflow.Execution{Result: map[string]any{
		// One extraction per workflow: a second run (after a crash)
		// writes the same one.
		"extractionId": "ext_" + settleflow.WorkflowID(ctx),
		"documentId":   x.DocumentID,
		"pages":        x.Pages,
		"quality":      quality,
		"fields":       map[string]any{"title": "Document " + x.DocumentID, "pageCount": x.Pages, "language": "en"},
	}}, nil
}

// ticket-resolution.

type resolution struct {
	TicketID string `json:"ticketId" jsonschema:"required,minLength=1,maxLength=100,description=The ticket's id in your helpdesk."`
	Question string `json:"question" jsonschema:"required,minLength=1,maxLength=5000,description=The customer's question; not only white space."`
}

// JSONSchemaExtend adds the pattern a tag cannot hold.
func (resolution) JSONSchemaExtend(s *jsonschema.Schema) {
	if p, ok := s.Properties.Get("question"); ok {
		p.Pattern = nonBlank
	}
}

func (r resolution) Validate() error {
	switch n := utf8.RuneCountInString(r.TicketID); {
	case n == 0:
		return &settleflow.FieldError{Field: "ticketId", Message: "is required"}
	case n > 100:
		return &settleflow.FieldError{Field: "ticketId", Message: "has at most 100 characters"}
	}
	switch n := utf8.RuneCountInString(r.Question); {
	case strings.TrimSpace(r.Question) == "":
		return &settleflow.FieldError{Field: "question", Message: "is required and not only white space"}
	case n > 5000:
		return &settleflow.FieldError{Field: "question", Message: "has at most 5000 characters"}
	}
	return nil
}

// topic is what the demo's knowledge base answers.
type topic struct {
	name       string
	keywords   []string
	answer     string
	confidence float64
}

var knowledgeBase = []topic{
	{"password", []string{"password", "log in", "login", "sign in"}, "Reset it from Settings → Security → Reset password; the link is valid for 30 minutes.", 0.93},
	{"invoice", []string{"invoice", "receipt", "billing"}, "Every invoice is under Billing → Invoices, as PDF; a corrected one can be requested there.", 0.88},
	{"refund", []string{"refund", "money back"}, "Refunds go back to the original payment method within 5 business days of approval.", 0.86},
	{"shipping", []string{"shipping", "delivery", "tracking"}, "Orders ship within 2 business days; the tracking link is in the confirmation e-mail.", 0.82},
}

// Costs of ticket-resolution, in cents.
const (
	resolutionBase      = 20  // estimate: the model call
	resolutionPerChars  = 200 // estimate: one cent per this many characters
	resolutionModel     = 12  // actual: the model call
	resolutionModelPer  = 250 // actual: one cent per this many characters
	resolutionSearch    = 3   // one knowledge-base search
	resolutionEscalated = 2   // handing an unanswered ticket to the helpdesk
)

func resolutionEstimate(r resolution) (int64, error) {
	n := int64(utf8.RuneCountInString(r.Question))
	return resolutionBase + (n+resolutionPerChars-1)/resolutionPerChars, nil
}

// resolve answers r from the knowledge base: one topic is resolved with the
// topic's confidence; several are resolved with the first's answer at 0.64
// (it answers one question of several); none is escalated at 0.35.
func resolve(ctx context.Context, r resolution) (settleflow.Execution, error) {
	if err := pause(ctx, 40*time.Millisecond); err != nil {
		return settleflow.Execution{}, err
	}
	q := strings.ToLower(r.Question)
	var matched []topic
	for _, t := range knowledgeBase {
		for _, k := range t.keywords {
			if strings.Contains(q, k) {
				matched = append(matched, t)
				break
			}
		}
	}
	n := int64(utf8.RuneCountInString(r.Question))
	items := []settleflow.CostItem{
		{Category: settleflow.CostModel, Provider: "chat-model", Units: 500 + n/4, Amount: resolutionModel + (n+resolutionModelPer-1)/resolutionModelPer},
		{Category: settleflow.CostTools, Provider: "kb-search", Units: int64(max(1, len(matched))), Amount: resolutionSearch * int64(max(1, len(matched)))},
	}
	result := map[string]any{
		"ticketId": r.TicketID,
		// The reply is posted under the workflow's id: a second run
		// replaces it rather than posting another.
		"replyId": "rpl_" + settleflow.WorkflowID(ctx),
	}
	switch len(matched) {
	case 0:
		items = append(items, settleflow.CostItem{Category: settleflow.CostTools, Provider: "helpdesk-api", Units: 1, Amount: resolutionEscalated})
		result["status"], result["confidence"] = "escalated", 0.35
	case 1:
		result["status"], result["confidence"], result["topic"], result["answer"] = "resolved", matched[0].confidence, matched[0].name, matched[0].answer
	default:
		result["status"], result["confidence"], result["topic"], result["answer"] = "resolved", 0.64, matched[0].name, matched[0].answer
	}
	return settleflow.Execution{CostItems: items, Result: result}, nil
}

// lead-enrichment.

type lead struct {
	Email   string `json:"email" jsonschema:"required,minLength=3,maxLength=254,description=The lead's e-mail address. Business addresses are found; personal mail addresses (gmail.com and the like) are not."`
	Company string `json:"company,omitempty" jsonschema:"maxLength=200,description=The lead's company if known: the first provider then finds a business address."`
}

// emailAddress is the pattern the schema states and Validate checks.
const emailAddress = `^[^@\s]+@[^@\s]+\.[^@\s]+$`

var emailPattern = regexp.MustCompile(emailAddress)

// JSONSchemaExtend adds the pattern a tag cannot hold.
func (lead) JSONSchemaExtend(s *jsonschema.Schema) {
	if p, ok := s.Properties.Get("email"); ok {
		p.Pattern = emailAddress
	}
}

func (l lead) Validate() error {
	switch n := utf8.RuneCountInString(l.Email); {
	case n < 3 || n > 254 || !emailPattern.MatchString(l.Email):
		return &settleflow.FieldError{Field: "email", Message: "must be an e-mail address of at most 254 characters"}
	case utf8.RuneCountInString(l.Company) > 200:
		return &settleflow.FieldError{Field: "company", Message: "has at most 200 characters"}
	}
	return nil
}

// The provider waterfall, queried in order until one finds the lead.
var waterfall = []struct {
	name string
	cost int64 // cents per lookup
}{{"company-graph", 8}, {"people-directory", 12}, {"email-finder", 15}, {"social-profiles", 20}}

// leadModel is the model call that normalizes the lead, in cents.
const leadModel = 3

func leadEstimate(lead) (int64, error) {
	return leadModel + waterfall[0].cost + waterfall[1].cost, nil
}

var personalDomains = map[string]bool{"gmail.com": true, "googlemail.com": true, "yahoo.com": true, "outlook.com": true,
	"hotmail.com": true, "icloud.com": true, "aol.com": true, "proton.me": true, "protonmail.com": true}

var titles = []string{"Head of Operations", "VP Engineering", "Procurement Manager", "Chief Financial Officer", "Product Lead"}

// enrich queries the waterfall: the provider that finds the lead ends it;
// with a margin floor, a lookup is made only if its cost and the model
// call's still fit the budget (SpendBudget), so the product stops short of
// it rather than being stopped.
func enrich(ctx context.Context, l lead) (settleflow.Execution, error) {
	at := strings.LastIndexByte(l.Email, '@')
	local, domain := l.Email[:at], strings.ToLower(l.Email[at+1:])
	foundBy := -1 // the provider that finds the lead
	switch {
	case personalDomains[domain]:
	case strings.TrimSpace(l.Company) != "":
		foundBy = 0
	default:
		foundBy = 1
	}
	budget, bounded := settleflow.SpendBudget(ctx)
	spent := int64(leadModel)
	var queried []string
	stop := "exhausted"
	for i, p := range waterfall {
		if bounded && spent+p.cost > budget {
			stop = "budget"
			break
		}
		if err := pause(ctx, 10*time.Millisecond); err != nil {
			return settleflow.Execution{}, err
		}
		if err := settleflow.ReportSpend(ctx, settleflow.CostItem{Category: settleflow.CostTools, Provider: p.name, Units: 1, Amount: p.cost}); err != nil {
			return settleflow.Execution{}, err
		}
		spent += p.cost
		queried = append(queried, p.name)
		if i == foundBy {
			stop = "found"
			break
		}
	}
	result := map[string]any{"email": l.Email, "found": stop == "found", "providers": queried, "stoppedBy": stop}
	if stop == "found" {
		company := strings.TrimSpace(l.Company)
		if company == "" {
			company = capitalize(strings.Split(domain, ".")[0])
		}
		h := fnv.New32a()
		h.Write([]byte(strings.ToLower(l.Email)))
		result["contact"] = map[string]any{"name": nameOf(local), "title": titles[h.Sum32()%uint32(len(titles))], "company": company, "domain": domain}
	}
	return settleflow.Execution{
		CostItems: []settleflow.CostItem{{Category: settleflow.CostModel, Provider: "chat-model", Units: 250, Amount: leadModel}},
		Result:    result,
	}, nil
}

// nameOf makes "Jane Doe" of "jane.doe".
func nameOf(local string) string {
	parts := strings.FieldsFunc(local, func(r rune) bool { return r == '.' || r == '_' || r == '-' || r == '+' })
	for i, p := range parts {
		parts[i] = capitalize(p)
	}
	return strings.Join(parts, " ")
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func registerOutcomeProducts(ps *settleflow.Products, remote map[string]bool) error {
	return errors.Join(
		settleflow.Register(ps, settleflow.Product[extraction]{
			Name:        "document-extraction",
			Example:     &extraction{DocumentID: "INV-2026-0042", Pages: 12, Quality: "scanned"},
			Description: "Extracts the fields of a document, reading scanned pages by OCR. Priced at cost plus 30 %, capped at the quote.",
			Price: settleflow.Price{Model: settleflow.PricingCapped, TargetMargin: 3000, MinimumCharge: 25,
				Markup: 3000},
			MarginFloor: 1000,
			PricingSummary: "capped at the quote, which estimates cost 0.10 USD plus 0.04 USD per page (plus 0.02 USD per page for OCR unless clean) at a 30 % target margin, at least 0.25 USD; " +
				"charged actual cost plus 30 %, at least 0.25 USD; margin floor 10 %",
			Estimate: extractionEstimate,
			Remote:   remote["document-extraction"],
			Execute:  local(remote, "document-extraction", extract),
		}),
		settleflow.Register(ps, settleflow.Product[resolution]{
			Name:            "ticket-resolution",
			Example:         &resolution{TicketID: "T-77", Question: "How do I reset my password?"},
			Description:     "Answers a support ticket from the knowledge base. Charged only when resolved with confidence.",
			Price:           settleflow.Price{Model: settleflow.PricingSuccessFee, TargetMargin: 6000, MinimumCharge: 100},
			SuccessCriteria: resolutionCriteria,
			PricingSummary:  "success fee: the quote (cost 0.20 USD plus 0.01 USD per 200 characters, 60 % target margin, at least 1.00 USD) if status is resolved and confidence at least 0.8, else nothing",
			Estimate:        resolutionEstimate,
			Remote:          remote["ticket-resolution"],
			Execute:         local(remote, "ticket-resolution", resolve),
		}),
		settleflow.Register(ps, settleflow.Product[lead]{
			Name:            "lead-enrichment",
			Example:         &lead{Email: "jane.doe@acme.example", Company: "Acme"},
			Description:     "Finds a lead's name, title and company through a waterfall of data providers. A base fee always, the rest when found.",
			Price:           settleflow.Price{Model: settleflow.PricingHybrid, TargetMargin: 4000, MinimumCharge: 20, BaseShare: 3000},
			SuccessCriteria: leadCriteria,
			MarginFloor:     2000,
			PricingSummary:  "hybrid: 30 % of the quote always, all of it when the lead is found; the quote estimates cost 0.23 USD at a 40 % target margin, at least 0.20 USD; margin floor 20 %",
			Estimate:        leadEstimate,
			Remote:          remote["lead-enrichment"],
			Execute:         local(remote, "lead-enrichment", enrich),
		}),
	)
}
