package http

import (
	"net/http"
	"net/url"
	"slices"
)

// The action's page decides (issue 28): its card is the queue's, whole,
// and a decision made there reloads it; risky cards come first.

// riskyFirst puts the risky cards of a page first, each group newest
// first as the store gave them. The order is the page's: the store pages
// the queue by time, so a risky action older than a full page of 100
// shows first on its own page (docs/cards.md).
func riskyFirst(cards []card) {
	slices.SortStableFunc(cards, func(a, b card) int {
		switch {
		case len(a.Risks) > 0 && len(b.Risks) == 0:
			return -1
		case len(a.Risks) == 0 && len(b.Risks) > 0:
			return 1
		}
		return 0
	})
}

// fullCard makes a card the action page's: the whole diff, or the whole
// write where the file on disk is not shown.
func fullCard(c *card) {
	c.Full = true
	if c.Preview != nil && c.Preview.Diff != nil {
		c.Diff, c.DiffMore = diffLines(c.Preview.Diff.Unified, 0)
	}
	writtenWhole(c)
}

// fromActionPage reports whether an htmx request comes from the page of
// the action it names (htmx sends the page's address in HX-Current-URL):
// its card is then re-rendered whole, and a decision reloads that page
// instead of leaving the queue's flash. It only chooses how to answer;
// what is decided, and who may, is the same from every page.
func fromActionPage(r *http.Request) bool {
	u, err := url.Parse(r.Header.Get("HX-Current-URL"))
	return err == nil && u.Path == "/ui/actions/"+r.PathValue("action")
}
