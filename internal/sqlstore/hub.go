package sqlstore

import "sync"

// Hub fans commit notifications out to subscribers without ever blocking
// the writer: each subscriber has a one-slot channel, and a pending signal
// absorbs the next ones.
type Hub struct {
	mu   sync.Mutex
	next int
	subs map[int]hubSub
}

type hubSub struct {
	project string
	ch      chan struct{}
}

// Subscribe returns a channel signalled after changes to the project ("" for
// every project), and its cancel function.
func (h *Hub) Subscribe(projectID string) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[int]hubSub{}
	}
	id := h.next
	h.next++
	ch := make(chan struct{}, 1)
	h.subs[id] = hubSub{project: projectID, ch: ch}
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs, id)
			h.mu.Unlock()
		})
	}
}

// Publish signals the subscribers of each project.
func (h *Hub) Publish(projectIDs ...string) {
	if len(projectIDs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs {
		for _, p := range projectIDs {
			if s.project == "" || s.project == p {
				select {
				case s.ch <- struct{}{}:
				default:
				}
				break
			}
		}
	}
}
