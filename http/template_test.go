package http

import "testing"

// TestTemplatesParse: the web's templates are parsed on first use (so
// that brabo check and brabo hook do not pay for them at start); a
// template that no longer parses must still fail a test, not only the
// first page a member opens.
func TestTemplatesParse(t *testing.T) {
	p := pages()
	for _, name := range []string{"queue.html", "layout.html"} {
		if p.Lookup(name) == nil {
			t.Errorf("template %q is missing; have %s", name, p.DefinedTemplates())
		}
	}
	if pages() != p {
		t.Error("pages() parsed the templates a second time")
	}
}
