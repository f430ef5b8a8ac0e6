package mock

import (
	"context"

	"github.com/brabo-dev/brabo"
)

// Executor is a brabo.Executor whose Execute calls ExecuteFn.
type Executor struct {
	ExecuteFn func(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error)
}

var _ brabo.Executor = (*Executor)(nil)

// Execute calls ExecuteFn.
func (e *Executor) Execute(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	if e.ExecuteFn == nil {
		panic("mock: Executor.Execute called, but ExecuteFn is not set")
	}
	return e.ExecuteFn(ctx, req)
}
