package mock

import (
	"context"

	"github.com/brabo-dev/brabo"
)

// ActionService is a brabo.ActionService whose methods call the field of their name
// with Fn appended.
type ActionService struct {
	ProposeFn            func(ctx context.Context, req brabo.ProposeRequest) (*brabo.ProposedAction, error)
	ApproveFn            func(ctx context.Context, actionID string, m *brabo.Member, revision string) (*brabo.Decided, error)
	DenyFn               func(ctx context.Context, actionID string, m *brabo.Member, reason string) (*brabo.ProposedAction, error)
	AlwaysAllowPreviewFn func(ctx context.Context, actionID string, m *brabo.Member) (*brabo.Decided, error)
	ApproveAlwaysFn      func(ctx context.Context, actionID string, m *brabo.Member, revision string) (*brabo.Decided, error)
	AllowNetworkFn       func(ctx context.Context, actionID string, m *brabo.Member) (*brabo.Decided, error)
	ReportFn             func(ctx context.Context, actionID string, agent *brabo.Agent, res brabo.Result) (*brabo.ProposedAction, error)
	AbandonFn            func(ctx context.Context, actionID string, agent *brabo.Agent, reason string) (*brabo.ProposedAction, error)
	ActionFn             func(ctx context.Context, id string) (*brabo.ProposedAction, error)
	VisibleActionFn      func(ctx context.Context, by brabo.Actor, id string) (*brabo.ProposedAction, error)
	ActionsFn            func(ctx context.Context, f brabo.ActionFilter) ([]*brabo.ProposedAction, int, error)
	PendingOfFn          func(ctx context.Context, memberID string, limit, offset int) ([]*brabo.ProposedAction, int, error)
	CardNowFn            func(ctx context.Context, a *brabo.ProposedAction) *brabo.ProposedAction
	PreviewFn            func(ctx context.Context, a *brabo.ProposedAction, p *brabo.Project, pr *brabo.PullRequest) *brabo.Preview
	CurrentReasonFn      func(ctx context.Context, a *brabo.ProposedAction) (string, error)
	PRFn                 func(ctx context.Context, projectID string, number int64) (*brabo.PullRequest, error)
	PRsFn                func(ctx context.Context, projectID string) ([]*brabo.PullRequest, error)
}

var _ brabo.ActionService = (*ActionService)(nil)

// Propose calls ProposeFn.
func (s *ActionService) Propose(ctx context.Context, req brabo.ProposeRequest) (*brabo.ProposedAction, error) {
	if s.ProposeFn == nil {
		panic("mock: ActionService.Propose called, but ProposeFn is not set")
	}
	return s.ProposeFn(ctx, req)
}

// Approve calls ApproveFn.
func (s *ActionService) Approve(ctx context.Context, actionID string, m *brabo.Member, revision string) (*brabo.Decided, error) {
	if s.ApproveFn == nil {
		panic("mock: ActionService.Approve called, but ApproveFn is not set")
	}
	return s.ApproveFn(ctx, actionID, m, revision)
}

// Deny calls DenyFn.
func (s *ActionService) Deny(ctx context.Context, actionID string, m *brabo.Member, reason string) (*brabo.ProposedAction, error) {
	if s.DenyFn == nil {
		panic("mock: ActionService.Deny called, but DenyFn is not set")
	}
	return s.DenyFn(ctx, actionID, m, reason)
}

// AlwaysAllowPreview calls AlwaysAllowPreviewFn.
func (s *ActionService) AlwaysAllowPreview(ctx context.Context, actionID string, m *brabo.Member) (*brabo.Decided, error) {
	if s.AlwaysAllowPreviewFn == nil {
		panic("mock: ActionService.AlwaysAllowPreview called, but AlwaysAllowPreviewFn is not set")
	}
	return s.AlwaysAllowPreviewFn(ctx, actionID, m)
}

// ApproveAlways calls ApproveAlwaysFn.
func (s *ActionService) ApproveAlways(ctx context.Context, actionID string, m *brabo.Member, revision string) (*brabo.Decided, error) {
	if s.ApproveAlwaysFn == nil {
		panic("mock: ActionService.ApproveAlways called, but ApproveAlwaysFn is not set")
	}
	return s.ApproveAlwaysFn(ctx, actionID, m, revision)
}

// AllowNetwork calls AllowNetworkFn.
func (s *ActionService) AllowNetwork(ctx context.Context, actionID string, m *brabo.Member) (*brabo.Decided, error) {
	if s.AllowNetworkFn == nil {
		panic("mock: ActionService.AllowNetwork called, but AllowNetworkFn is not set")
	}
	return s.AllowNetworkFn(ctx, actionID, m)
}

// Report calls ReportFn.
func (s *ActionService) Report(ctx context.Context, actionID string, agent *brabo.Agent, res brabo.Result) (*brabo.ProposedAction, error) {
	if s.ReportFn == nil {
		panic("mock: ActionService.Report called, but ReportFn is not set")
	}
	return s.ReportFn(ctx, actionID, agent, res)
}

// Abandon calls AbandonFn.
func (s *ActionService) Abandon(ctx context.Context, actionID string, agent *brabo.Agent, reason string) (*brabo.ProposedAction, error) {
	if s.AbandonFn == nil {
		panic("mock: ActionService.Abandon called, but AbandonFn is not set")
	}
	return s.AbandonFn(ctx, actionID, agent, reason)
}

// Action calls ActionFn.
func (s *ActionService) Action(ctx context.Context, id string) (*brabo.ProposedAction, error) {
	if s.ActionFn == nil {
		panic("mock: ActionService.Action called, but ActionFn is not set")
	}
	return s.ActionFn(ctx, id)
}

// VisibleAction calls VisibleActionFn.
func (s *ActionService) VisibleAction(ctx context.Context, by brabo.Actor, id string) (*brabo.ProposedAction, error) {
	if s.VisibleActionFn == nil {
		panic("mock: ActionService.VisibleAction called, but VisibleActionFn is not set")
	}
	return s.VisibleActionFn(ctx, by, id)
}

// Actions calls ActionsFn.
func (s *ActionService) Actions(ctx context.Context, f brabo.ActionFilter) ([]*brabo.ProposedAction, int, error) {
	if s.ActionsFn == nil {
		panic("mock: ActionService.Actions called, but ActionsFn is not set")
	}
	return s.ActionsFn(ctx, f)
}

// PendingOf calls PendingOfFn.
func (s *ActionService) PendingOf(ctx context.Context, memberID string, limit, offset int) ([]*brabo.ProposedAction, int, error) {
	if s.PendingOfFn == nil {
		panic("mock: ActionService.PendingOf called, but PendingOfFn is not set")
	}
	return s.PendingOfFn(ctx, memberID, limit, offset)
}

// Preview calls PreviewFn.
func (s *ActionService) Preview(ctx context.Context, a *brabo.ProposedAction, p *brabo.Project, pr *brabo.PullRequest) *brabo.Preview {
	if s.PreviewFn == nil {
		panic("mock: ActionService.Preview called, but PreviewFn is not set")
	}
	return s.PreviewFn(ctx, a, p, pr)
}

// CurrentReason calls CurrentReasonFn.
func (s *ActionService) CurrentReason(ctx context.Context, a *brabo.ProposedAction) (string, error) {
	if s.CurrentReasonFn == nil {
		panic("mock: ActionService.CurrentReason called, but CurrentReasonFn is not set")
	}
	return s.CurrentReasonFn(ctx, a)
}

// PR calls PRFn.
func (s *ActionService) PR(ctx context.Context, projectID string, number int64) (*brabo.PullRequest, error) {
	if s.PRFn == nil {
		panic("mock: ActionService.PR called, but PRFn is not set")
	}
	return s.PRFn(ctx, projectID, number)
}

// PRs calls PRsFn.
func (s *ActionService) PRs(ctx context.Context, projectID string) ([]*brabo.PullRequest, error) {
	if s.PRsFn == nil {
		panic("mock: ActionService.PRs called, but PRsFn is not set")
	}
	return s.PRsFn(ctx, projectID)
}

// CardNow calls CardNowFn; without it, the action as it is.
func (s *ActionService) CardNow(ctx context.Context, a *brabo.ProposedAction) *brabo.ProposedAction {
	if s.CardNowFn == nil {
		return a
	}
	return s.CardNowFn(ctx, a)
}
