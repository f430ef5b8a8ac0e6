package brabo_test

import (
	"slices"
	"testing"

	"github.com/brabo-dev/brabo"
)

// Every action type has a row of traits, and the table holds no type the
// list does not: a type added without its row would be
// granted nothing, routed nowhere and shown as a bare payload.
func TestEveryActionTypeHasTraits(t *testing.T) {
	routes := []brabo.Route{brabo.RouteExecutor, brabo.RouteStore, brabo.RouteContainer, brabo.RouteHandoff, brabo.RouteAgent}
	labels := map[string]brabo.ActionType{}
	for _, typ := range brabo.AllActionTypes() {
		tr := typ.Traits()
		if tr.Label == "" || tr.MinRole == "" || tr.Route == "" {
			t.Errorf("%s has no traits row (or one without a label, role or route): %+v", typ, tr)
			continue
		}
		if !slices.Contains(routes, tr.Route) {
			t.Errorf("%s: route %q is none of %v", typ, tr.Route, routes)
		}
		if prev, ok := labels[tr.Label]; ok {
			t.Errorf("%s and %s share the label %s", typ, prev, tr.Label)
		}
		labels[tr.Label] = typ
		// The accessors read the row, not a list of their own.
		if typ.Label() != tr.Label || typ.MinRole() != tr.MinRole || !typ.Valid() {
			t.Errorf("%s: Label %q MinRole %s Valid %v, the row says %+v", typ, typ.Label(), typ.MinRole(), typ.Valid(), tr)
		}
		if got, ok := brabo.ActionTypeForLabel(tr.Label); !ok || got != typ {
			t.Errorf("ActionTypeForLabel(%s) = %s %v", tr.Label, got, ok)
		}
		if typ.DecideOnly() != (tr.Route == brabo.RouteAgent) {
			t.Errorf("%s: DecideOnly %v with route %s", typ, typ.DecideOnly(), tr.Route)
		}
		// Only the types brabo runs can need its folder or a slot.
		if tr.Route == brabo.RouteAgent && (tr.NeedsFolder || tr.RunsCommands) {
			t.Errorf("%s: brabo does not run it, yet it needs the folder or a slot: %+v", typ, tr)
		}
	}
	// No row for a type that is not in the list: the list is every type.
	for label, typ := range labels {
		if !slices.Contains(brabo.AllActionTypes(), typ) {
			t.Errorf("%s (%s) has traits and is no action type", typ, label)
		}
	}
	if unknown := brabo.ActionType("nope"); unknown.Valid() || unknown.MinRole() != brabo.Owner || unknown.Traits() != (brabo.Traits{}) {
		t.Errorf("an unknown type: valid %v, MinRole %s, traits %+v", unknown.Valid(), unknown.MinRole(), unknown.Traits())
	}
	// What DESIGN fixes, read through the table: spend is the owner's,
	// container_stop and container_remove a human's, read_file and
	// mcp_tool the agent's to run.
	for typ, want := range map[brabo.ActionType]func(brabo.Traits) bool{
		brabo.Spend:           func(tr brabo.Traits) bool { return tr.MinRole == brabo.Owner && tr.Route == brabo.RouteStore },
		brabo.ContainerStop:   func(tr brabo.Traits) bool { return tr.HumanOnly && !tr.NeverAlwaysAllow },
		brabo.ContainerRemove: func(tr brabo.Traits) bool { return tr.HumanOnly && tr.NeverAlwaysAllow },
		brabo.ReadFile:        func(tr brabo.Traits) bool { return tr.Route == brabo.RouteAgent && tr.Preview == brabo.PreviewFileRead },
		brabo.McpTool:         func(tr brabo.Traits) bool { return tr.Route == brabo.RouteAgent },
		brabo.Terminal:        func(tr brabo.Traits) bool { return tr.NeedsFolder && tr.RunsCommands && !tr.HumanOnly },
	} {
		if !want(typ.Traits()) {
			t.Errorf("%s: %+v", typ, typ.Traits())
		}
	}
}
