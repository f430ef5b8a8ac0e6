package pipeline

import (
	"context"
	"testing"

	"github.com/brabo-dev/brabo"
)

// The pipeline executes itself exactly the types whose traits route them
// to the store (brabo.RouteStore), and hands the container engine exactly
// those routed to it: the table and the code that runs a type cannot
// drift apart.
func TestRoutesFollowTheTraits(t *testing.T) {
	s := &Service{}
	for _, typ := range brabo.AllActionTypes() {
		route := typ.Traits().Route
		applied := s.storeApply(context.Background(), &brabo.ProposedAction{Type: typ}, nil) != nil
		if applied != (route == brabo.RouteStore) {
			t.Errorf("%s: the pipeline applies it itself: %v; its route is %s", typ, applied, route)
		}
		if isContainerType(typ) != (route == brabo.RouteContainer) {
			t.Errorf("%s: a container type: %v; its route is %s", typ, isContainerType(typ), route)
		}
	}
}
