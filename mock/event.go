package mock

import (
	"context"

	"github.com/brabo-dev/brabo"
)

// EventService is a brabo.EventService whose methods call the field of their name
// with Fn appended.
type EventService struct {
	EventsFn        func(ctx context.Context, projectID string, after int64, limit int) ([]brabo.Event, error)
	ActionEventsFn  func(ctx context.Context, projectID, actionID string) ([]brabo.Event, error)
	LastEventSeqsFn func(ctx context.Context, memberID string) (map[string]int64, error)
	SubscribeFn     func(topic string) (ch <-chan struct{}, cancel func())
}

var _ brabo.EventService = (*EventService)(nil)

// Events calls EventsFn.
func (s *EventService) Events(ctx context.Context, projectID string, after int64, limit int) ([]brabo.Event, error) {
	if s.EventsFn == nil {
		panic("mock: EventService.Events called, but EventsFn is not set")
	}
	return s.EventsFn(ctx, projectID, after, limit)
}

// ActionEvents calls ActionEventsFn.
func (s *EventService) ActionEvents(ctx context.Context, projectID, actionID string) ([]brabo.Event, error) {
	if s.ActionEventsFn == nil {
		panic("mock: EventService.ActionEvents called, but ActionEventsFn is not set")
	}
	return s.ActionEventsFn(ctx, projectID, actionID)
}

// LastEventSeqs calls LastEventSeqsFn.
func (s *EventService) LastEventSeqs(ctx context.Context, memberID string) (map[string]int64, error) {
	if s.LastEventSeqsFn == nil {
		panic("mock: EventService.LastEventSeqs called, but LastEventSeqsFn is not set")
	}
	return s.LastEventSeqsFn(ctx, memberID)
}

// Subscribe calls SubscribeFn.
func (s *EventService) Subscribe(topic string) (ch <-chan struct{}, cancel func()) {
	if s.SubscribeFn == nil {
		panic("mock: EventService.Subscribe called, but SubscribeFn is not set")
	}
	return s.SubscribeFn(topic)
}
