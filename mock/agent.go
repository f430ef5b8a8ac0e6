package mock

import (
	"context"

	"github.com/brabo-dev/brabo"
)

// AgentService is a brabo.AgentService whose methods call the field of their name
// with Fn appended.
type AgentService struct {
	CreateAgentFn         func(ctx context.Context, projectID, principalID, name, kind string) (*brabo.Agent, string, error)
	AgentFn               func(ctx context.Context, id string) (*brabo.Agent, error)
	AgentsFn              func(ctx context.Context, projectID string) ([]*brabo.Agent, error)
	AutonomyFn            func(ctx context.Context, agentID string) ([]brabo.AgentAutonomy, error)
	AgentPatternsFn       func(ctx context.Context, agentID string) ([]brabo.AgentPattern, error)
	WaitingRunFn          func(ctx context.Context, actorKey string) (*brabo.Run, error)
	PutAutonomyFn         func(ctx context.Context, projectID, actorID string, rule brabo.AgentAutonomy, via string) (bool, error)
	RemoveAgentPatternFn  func(ctx context.Context, projectID, actorID, agentID, pattern, via string) (bool, error)
	RevokeAgentTokenFn    func(ctx context.Context, agentID string) error
	RotateAgentTokenFn    func(ctx context.Context, agentID string) (string, error)
	AgentInstructionsFn   func(ctx context.Context, agentID string) (string, error)
	AgentInstructionsOfFn func(ctx context.Context, projectID, agentID string, m *brabo.Member) (*brabo.AgentInstructions, error)
	SetInfraAgentFn       func(ctx context.Context, projectID, memberID, agentID string) error
}

var _ brabo.AgentService = (*AgentService)(nil)

// CreateAgent calls CreateAgentFn.
func (s *AgentService) CreateAgent(ctx context.Context, projectID, principalID, name, kind string) (*brabo.Agent, string, error) {
	if s.CreateAgentFn == nil {
		panic("mock: AgentService.CreateAgent called, but CreateAgentFn is not set")
	}
	return s.CreateAgentFn(ctx, projectID, principalID, name, kind)
}

// Agent calls AgentFn.
func (s *AgentService) Agent(ctx context.Context, id string) (*brabo.Agent, error) {
	if s.AgentFn == nil {
		panic("mock: AgentService.Agent called, but AgentFn is not set")
	}
	return s.AgentFn(ctx, id)
}

// Agents calls AgentsFn.
func (s *AgentService) Agents(ctx context.Context, projectID string) ([]*brabo.Agent, error) {
	if s.AgentsFn == nil {
		panic("mock: AgentService.Agents called, but AgentsFn is not set")
	}
	return s.AgentsFn(ctx, projectID)
}

// Autonomy calls AutonomyFn.
func (s *AgentService) Autonomy(ctx context.Context, agentID string) ([]brabo.AgentAutonomy, error) {
	if s.AutonomyFn == nil {
		panic("mock: AgentService.Autonomy called, but AutonomyFn is not set")
	}
	return s.AutonomyFn(ctx, agentID)
}

// AgentPatterns calls AgentPatternsFn.
func (s *AgentService) AgentPatterns(ctx context.Context, agentID string) ([]brabo.AgentPattern, error) {
	if s.AgentPatternsFn == nil {
		panic("mock: AgentService.AgentPatterns called, but AgentPatternsFn is not set")
	}
	return s.AgentPatternsFn(ctx, agentID)
}

// WaitingRun calls WaitingRunFn.
func (s *AgentService) WaitingRun(ctx context.Context, actorKey string) (*brabo.Run, error) {
	if s.WaitingRunFn == nil {
		panic("mock: AgentService.WaitingRun called, but WaitingRunFn is not set")
	}
	return s.WaitingRunFn(ctx, actorKey)
}

// PutAutonomy calls PutAutonomyFn.
func (s *AgentService) PutAutonomy(ctx context.Context, projectID, actorID string, rule brabo.AgentAutonomy, via string) (bool, error) {
	if s.PutAutonomyFn == nil {
		panic("mock: AgentService.PutAutonomy called, but PutAutonomyFn is not set")
	}
	return s.PutAutonomyFn(ctx, projectID, actorID, rule, via)
}

// RemoveAgentPattern calls RemoveAgentPatternFn.
func (s *AgentService) RemoveAgentPattern(ctx context.Context, projectID, actorID, agentID, pattern, via string) (bool, error) {
	if s.RemoveAgentPatternFn == nil {
		panic("mock: AgentService.RemoveAgentPattern called, but RemoveAgentPatternFn is not set")
	}
	return s.RemoveAgentPatternFn(ctx, projectID, actorID, agentID, pattern, via)
}

// RevokeAgentToken calls RevokeAgentTokenFn.
func (s *AgentService) RevokeAgentToken(ctx context.Context, agentID string) error {
	if s.RevokeAgentTokenFn == nil {
		panic("mock: AgentService.RevokeAgentToken called, but RevokeAgentTokenFn is not set")
	}
	return s.RevokeAgentTokenFn(ctx, agentID)
}

// RotateAgentToken calls RotateAgentTokenFn.
func (s *AgentService) RotateAgentToken(ctx context.Context, agentID string) (string, error) {
	if s.RotateAgentTokenFn == nil {
		panic("mock: AgentService.RotateAgentToken called, but RotateAgentTokenFn is not set")
	}
	return s.RotateAgentTokenFn(ctx, agentID)
}

// AgentInstructionsOf calls AgentInstructionsOfFn.
func (s *AgentService) AgentInstructionsOf(ctx context.Context, projectID, agentID string, m *brabo.Member) (*brabo.AgentInstructions, error) {
	if s.AgentInstructionsOfFn == nil {
		panic("mock: AgentService.AgentInstructionsOf called, but AgentInstructionsOfFn is not set")
	}
	return s.AgentInstructionsOfFn(ctx, projectID, agentID, m)
}

// SetInfraAgent calls SetInfraAgentFn.
func (s *AgentService) SetInfraAgent(ctx context.Context, projectID, memberID, agentID string) error {
	if s.SetInfraAgentFn == nil {
		panic("mock: AgentService.SetInfraAgent called, but SetInfraAgentFn is not set")
	}
	return s.SetInfraAgentFn(ctx, projectID, memberID, agentID)
}

// AgentInstructions calls AgentInstructionsFn.
func (s *AgentService) AgentInstructions(ctx context.Context, agentID string) (string, error) {
	if s.AgentInstructionsFn == nil {
		panic("mock: AgentService.AgentInstructions called, but AgentInstructionsFn is not set")
	}
	return s.AgentInstructionsFn(ctx, agentID)
}
