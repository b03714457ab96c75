package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
)

// Page is one page of a list, newest first: the API's list object
// {"object": "list", "url": …, "data": […], "hasMore": …}.
type Page[T any] struct {
	// Object is "list".
	Object string `json:"object"`
	// URL is the path listed, /v1/workflows for example.
	URL string `json:"url"`
	// Data holds the page's items.
	Data []T `json:"data"`
	// HasMore reports whether more items lie beyond this page in the
	// direction of the request: older ones after a first page or a
	// StartingAfter page, newer ones after an EndingBefore page.
	HasMore bool `json:"hasMore"`
}

// cursors are the keyset cursors of a list request.
type cursors struct{ startingAfter, endingBefore string }

// autoPage iterates over every item of a list, fetching page after page.
// Without EndingBefore it walks toward older items, newest first, each page
// starting after the last item of the one before. With EndingBefore (and no
// StartingAfter) it walks toward newer items, oldest first: each page ends
// before the newest item seen so far, and its items, which the API returns
// newest first, are yielded in reverse. Either way no item is yielded twice
// and none is skipped, however many are created meanwhile. An error is
// yielded once, and ends the iteration.
func autoPage[T any](ctx context.Context, start cursors, fetch func(context.Context, cursors) (*Page[T], error), id func(T) string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		backward := start.endingBefore != "" && start.startingAfter == ""
		cur := start
		for {
			page, err := fetch(ctx, cur)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			n := len(page.Data)
			for i := range n {
				item := page.Data[i]
				if backward {
					item = page.Data[n-1-i]
				}
				if !yield(item, nil) {
					return
				}
			}
			if !page.HasMore || n == 0 {
				return
			}
			if backward {
				cur = cursors{endingBefore: id(page.Data[0])}
			} else {
				cur = cursors{startingAfter: id(page.Data[n-1])}
			}
		}
	}
}

// getPage fetches one page of a list endpoint.
func getPage[T any](ctx context.Context, b *backend, path string, q url.Values) (*Page[T], error) {
	page := new(Page[T])
	if _, err := b.do(ctx, request{method: http.MethodGet, path: path, query: q}, page); err != nil {
		return nil, err
	}
	return page, nil
}
