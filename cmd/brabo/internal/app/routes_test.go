package app

import (
	"path/filepath"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// The executor brabo serve wires runs exactly the types whose traits route
// them to it (brabo.RouteExecutor): a type routed there with no runner
// would fail every approved action, and a runner for a type of another
// route would never be called.
func TestWiredExecutorRunsTheExecutorRoutedTypes(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ex := newExecutor(nil, "", st, nil, nil)
	for _, typ := range brabo.AllActionTypes() {
		if want := typ.Traits().Route == brabo.RouteExecutor; ex.Runs(typ) != want {
			t.Errorf("%s: the executor runs it: %v; its route is %s", typ, ex.Runs(typ), typ.Traits().Route)
		}
	}
}
