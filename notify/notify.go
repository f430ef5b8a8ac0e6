// Package notify tells people who are not looking at the page that an
// action waits for them, and what became of it: each project's webhooks
// (a maintainer's setting) receive a message when an action starts
// waiting and when it is decided, as brabo's signed JSON, a Slack
// incoming webhook's text, or an ntfy topic's message (docs/notifications.md).
//
// Delivery never slows the proposal path: Notify only puts the notice in
// a bounded queue, and workers deliver it with a timeout and a bounded
// number of tries. What cannot be delivered, and what the full queue
// dropped, is recorded in the project's log (notification.failed) and the
// server's, never lost silently.
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
)

// The headers of a json message. The signature is HMAC-SHA256, keyed with
// the project's webhook secret, over the timestamp, a dot and the body
// exactly as sent: hex(HMAC(secret, timestamp + "." + body)), written
// "sha256=<hex>". The timestamp is Unix seconds, in its own header; a
// receiver refuses one too far from its own clock (replays).
const (
	HeaderTimestamp = "X-Brabo-Timestamp"
	HeaderSignature = "X-Brabo-Signature"
	HeaderEvent     = "X-Brabo-Event"
	HeaderDelivery  = "X-Brabo-Delivery"
)

// Sign returns the X-Brabo-Signature value of a body sent at ts.
func Sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(ts, 10)))
	mac.Write([]byte("."))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a json message's signature and that its timestamp is
// within tolerance of now: what a receiver does (and the tests).
func Verify(secret string, header http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(header.Get(HeaderTimestamp), 10, 64)
	if err != nil {
		return fmt.Errorf("no valid %s", HeaderTimestamp)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("the timestamp is %s away from now", d.Round(time.Second))
	}
	if !hmac.Equal([]byte(header.Get(HeaderSignature)), []byte(Sign(secret, ts, body))) {
		return errors.New("the signature does not match")
	}
	return nil
}

// Notifier delivers notices to the projects' webhooks. Make one with New,
// then Start it.
type Notifier struct {
	store   brabo.Store
	baseURL string
	log     *slog.Logger
	// Client posts the messages; it follows no redirect. Timeout bounds
	// one try; Tries and Backoff bound the retries.
	Client  *http.Client
	Timeout time.Duration
	Tries   int
	Backoff time.Duration
	now     func() time.Time

	queues []chan brabo.Notice
	wg     sync.WaitGroup

	mu      sync.Mutex
	dropped map[string]int // project → notices dropped since the last record
}

// Defaults of New.
const (
	DefaultQueue   = 256
	DefaultWorkers = 4
	DefaultTimeout = 5 * time.Second
	DefaultTries   = 3
	DefaultBackoff = time.Second
)

// New returns a notifier over store whose messages link to the action's
// page under baseURL (http://127.0.0.1:8080).
func New(store brabo.Store, baseURL string, log *slog.Logger) *Notifier {
	if log == nil {
		log = slog.Default()
	}
	n := &Notifier{store: store, baseURL: strings.TrimSuffix(baseURL, "/"), log: log,
		Timeout: DefaultTimeout, Tries: DefaultTries, Backoff: DefaultBackoff, now: time.Now,
		dropped: map[string]int{}}
	n.Client = &http.Client{
		// A maintainer chose the URL; a redirect elsewhere is not theirs.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for range DefaultWorkers {
		n.queues = append(n.queues, make(chan brabo.Notice, DefaultQueue/DefaultWorkers))
	}
	return n
}

// Notify queues a notice (brabo.Notifier): it never blocks. The notices of
// one action go to one worker, in order. A full queue drops the notice and
// counts it; the count is recorded in the project's log.
func (n *Notifier) Notify(nt brabo.Notice) {
	if nt.Action == nil {
		return
	}
	h := fnv.New32a()
	h.Write([]byte(nt.Action.ID))
	select {
	case n.queues[int(h.Sum32())%len(n.queues)] <- nt:
	default:
		n.mu.Lock()
		n.dropped[nt.Action.ProjectID]++
		n.mu.Unlock()
		n.log.Warn("notification dropped: the queue is full", "action", nt.Action.ID, "kind", nt.Kind)
	}
}

// Start runs the workers until ctx ends; the returned function waits for
// them to finish the message they deliver.
func (n *Notifier) Start(ctx context.Context) (wait func()) {
	for _, q := range n.queues {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			tick := time.NewTicker(5 * time.Second)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case nt := <-q:
					n.deliver(ctx, nt)
				case <-tick.C:
				}
				n.recordDrops(ctx)
			}
		}()
	}
	return n.wg.Wait
}

// recordDrops writes one notification.failed event per project whose
// notices the full queue dropped.
func (n *Notifier) recordDrops(ctx context.Context) {
	n.mu.Lock()
	if len(n.dropped) == 0 {
		n.mu.Unlock()
		return
	}
	drops := n.dropped
	n.dropped = map[string]int{}
	n.mu.Unlock()
	for project, count := range drops {
		n.record(ctx, project, "", map[string]any{"dropped": count,
			"error": fmt.Sprintf("%d notifications were dropped: the queue was full", count)})
	}
}

// record appends a notification.failed event; a store that fails is
// said in the server's log.
func (n *Notifier) record(ctx context.Context, projectID, actionID string, payload map[string]any) {
	body, _ := json.Marshal(payload)
	err := n.store.Update(context.WithoutCancel(ctx), func(tx brabo.Tx) error {
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: projectID, Type: brabo.EventNotifyFailed, ActorID: brabo.SystemActor,
			ActionID: actionID, Payload: body, CreatedAt: n.now().UTC()})
	})
	if err != nil {
		n.log.Error("recording a failed notification failed", "project", projectID, "err", err)
	}
}

// facts is what a message says besides the action.
type facts struct {
	slug, agent, decider string
	hooks                []*brabo.Webhook
	secret               string
}

func (n *Notifier) read(ctx context.Context, a *brabo.ProposedAction) (*facts, error) {
	f := &facts{}
	err := n.store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if f.hooks, err = tx.Webhooks(ctx, a.ProjectID); err != nil || len(f.hooks) == 0 {
			return err
		}
		p, err := tx.Project(ctx, a.ProjectID)
		if err != nil {
			return err
		}
		f.slug = p.Slug
		f.agent = a.ActorID
		if a.ActorKind == "agent" {
			if ag, err := tx.Agent(ctx, a.ActorID); err == nil {
				f.agent = ag.Name
			}
		} else if m, err := tx.Member(ctx, a.ActorID); err == nil {
			f.agent = m.Name
		}
		if a.DecidedBy != "" {
			f.decider = a.DecidedBy
			if m, err := tx.Member(ctx, a.DecidedBy); err == nil {
				f.decider = m.Name
			}
		}
		f.secret, err = tx.WebhookSecret(ctx, a.ProjectID)
		if errors.Is(err, brabo.ErrNotFound) {
			err = nil
		}
		return err
	})
	return f, err
}

// deliver sends one notice to every webhook of its project, at once.
func (n *Notifier) deliver(ctx context.Context, nt brabo.Notice) {
	a := nt.Action
	f, err := n.read(ctx, a)
	if err != nil {
		n.log.Error("reading a project's webhooks failed", "project", a.ProjectID, "err", err)
		return
	}
	var wg sync.WaitGroup
	for _, h := range f.hooks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.send(ctx, nt, f, h)
		}()
	}
	wg.Wait()
}

// send posts one message, with up to Tries tries; a webhook that failed
// every one is recorded.
func (n *Notifier) send(ctx context.Context, nt brabo.Notice, f *facts, h *brabo.Webhook) {
	m := n.message(nt, f, h)
	var last error
	for try := 1; try <= max(1, n.Tries); try++ {
		if try > 1 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(n.Backoff * time.Duration(1<<(try-2))):
			}
		}
		retry, err := n.post(ctx, h, m, f.secret)
		if err == nil {
			return
		}
		last = err
		if !retry {
			break
		}
	}
	host := h.URL
	if u, err := url.Parse(h.URL); err == nil {
		host = u.Host // the URL itself may be a secret (Slack, ntfy)
	}
	n.log.Warn("a notification could not be delivered", "project", nt.Action.ProjectID, "action", nt.Action.ID,
		"webhook", host, "format", h.Format, "err", last)
	n.record(ctx, nt.Action.ProjectID, nt.Action.ID, map[string]any{"webhook": host, "format": h.Format,
		"kind": nt.Kind, "error": last.Error()})
}

// post sends one try; retry says whether another may succeed.
func (n *Notifier) post(ctx context.Context, h *brabo.Webhook, m *message, secret string) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, n.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(m.body))
	if err != nil {
		return false, err
	}
	req.Header.Set("User-Agent", "brabo-notify/1")
	for k, v := range m.header {
		req.Header.Set(k, v)
	}
	if h.Format == brabo.FormatJSON {
		ts := n.now().Unix()
		req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
		if secret != "" {
			req.Header.Set(HeaderSignature, Sign(secret, ts, m.body))
		}
	}
	resp, err := n.Client.Do(req)
	if err != nil {
		return true, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("the webhook answered %s", resp.Status)
	}
	return false, fmt.Errorf("the webhook answered %s", resp.Status)
}

func deliveryID() string {
	var b [12]byte
	rand.Read(b[:])
	return "dlv_" + hex.EncodeToString(b[:])
}
