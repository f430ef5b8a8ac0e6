package mock

import (
	"context"

	"github.com/brabo-dev/brabo"
)

// ExecutionService is a brabo.ExecutionService whose methods call the field of their name
// with Fn appended.
type ExecutionService struct {
	ActivateExecutionFn   func(ctx context.Context, projectID string, m *brabo.Member) (*brabo.Activation, error)
	BudgetOfFn            func(ctx context.Context, projectID string, m *brabo.Member) (*brabo.BudgetView, error)
	SetBudgetFn           func(ctx context.Context, projectID string, m *brabo.Member, limit, inputPrice, outputPrice brabo.Money) (*brabo.BudgetView, error)
	ModuleMapOfFn         func(ctx context.Context, projectID string, m *brabo.Member) (*brabo.ModuleMap, error)
	SetModuleMapFn        func(ctx context.Context, projectID string, m *brabo.Member, modules []brabo.Module) (*brabo.ModuleMap, error)
	ProtectedBranchesOfFn func(ctx context.Context, projectID string, m *brabo.Member) ([]brabo.ProtectedBranch, error)
	RecordModelUsageFn    func(ctx context.Context, u brabo.ModelUsage) error
	ContainersOfFn        func(ctx context.Context, m *brabo.Member) ([]brabo.ContainerRow, error)
}

var _ brabo.ExecutionService = (*ExecutionService)(nil)

// ActivateExecution calls ActivateExecutionFn.
func (s *ExecutionService) ActivateExecution(ctx context.Context, projectID string, m *brabo.Member) (*brabo.Activation, error) {
	if s.ActivateExecutionFn == nil {
		panic("mock: ExecutionService.ActivateExecution called, but ActivateExecutionFn is not set")
	}
	return s.ActivateExecutionFn(ctx, projectID, m)
}

// BudgetOf calls BudgetOfFn.
func (s *ExecutionService) BudgetOf(ctx context.Context, projectID string, m *brabo.Member) (*brabo.BudgetView, error) {
	if s.BudgetOfFn == nil {
		panic("mock: ExecutionService.BudgetOf called, but BudgetOfFn is not set")
	}
	return s.BudgetOfFn(ctx, projectID, m)
}

// SetBudget calls SetBudgetFn.
func (s *ExecutionService) SetBudget(ctx context.Context, projectID string, m *brabo.Member, limit, inputPrice, outputPrice brabo.Money) (*brabo.BudgetView, error) {
	if s.SetBudgetFn == nil {
		panic("mock: ExecutionService.SetBudget called, but SetBudgetFn is not set")
	}
	return s.SetBudgetFn(ctx, projectID, m, limit, inputPrice, outputPrice)
}

// ModuleMapOf calls ModuleMapOfFn.
func (s *ExecutionService) ModuleMapOf(ctx context.Context, projectID string, m *brabo.Member) (*brabo.ModuleMap, error) {
	if s.ModuleMapOfFn == nil {
		panic("mock: ExecutionService.ModuleMapOf called, but ModuleMapOfFn is not set")
	}
	return s.ModuleMapOfFn(ctx, projectID, m)
}

// SetModuleMap calls SetModuleMapFn.
func (s *ExecutionService) SetModuleMap(ctx context.Context, projectID string, m *brabo.Member, modules []brabo.Module) (*brabo.ModuleMap, error) {
	if s.SetModuleMapFn == nil {
		panic("mock: ExecutionService.SetModuleMap called, but SetModuleMapFn is not set")
	}
	return s.SetModuleMapFn(ctx, projectID, m, modules)
}

// ProtectedBranchesOf calls ProtectedBranchesOfFn.
func (s *ExecutionService) ProtectedBranchesOf(ctx context.Context, projectID string, m *brabo.Member) ([]brabo.ProtectedBranch, error) {
	if s.ProtectedBranchesOfFn == nil {
		panic("mock: ExecutionService.ProtectedBranchesOf called, but ProtectedBranchesOfFn is not set")
	}
	return s.ProtectedBranchesOfFn(ctx, projectID, m)
}

// ContainersOf calls ContainersOfFn.
func (s *ExecutionService) ContainersOf(ctx context.Context, m *brabo.Member) ([]brabo.ContainerRow, error) {
	if s.ContainersOfFn == nil {
		panic("mock: ExecutionService.ContainersOf called, but ContainersOfFn is not set")
	}
	return s.ContainersOfFn(ctx, m)
}

// RecordModelUsage calls RecordModelUsageFn.
func (s *ExecutionService) RecordModelUsage(ctx context.Context, u brabo.ModelUsage) error {
	if s.RecordModelUsageFn == nil {
		panic("mock: ExecutionService.RecordModelUsage called, but RecordModelUsageFn is not set")
	}
	return s.RecordModelUsageFn(ctx, u)
}
