package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
)

// WebhookInput is one webhook a maintainer sets (brabo.WebhookInput).
type WebhookInput = brabo.WebhookInput

// MaxWebhooks is how many webhooks one project may have.
const MaxWebhooks = 10

// CheckWebhookURL refuses what is not an http or https URL with a host.
// Any host is allowed, loopback and private addresses included: the URL is
// a maintainer's setting, and brabo posts to it from the server's network
// (docs/notifications.md says so). Redirects are not followed.
func CheckWebhookURL(raw string) error {
	if len(raw) > 2048 {
		return invalid("a webhook URL is at most 2048 bytes")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return invalid("webhook URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return invalid("webhook URL %q: want an http:// or https:// URL", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return invalid("webhook URL %q names no host", raw)
	}
	return nil
}

// SetWebhooks replaces a project's webhooks, for maintainer m (the caller
// checks the role), and records project.webhooks_changed. A project that
// gets its first json webhook gets a signing secret too: it is returned
// (newSecret) this once, and never shown again.
func (s *Service) SetWebhooks(ctx context.Context, projectID string, m *brabo.Member, in []WebhookInput) (hooks []*brabo.Webhook, newSecret string, err error) {
	if len(in) > MaxWebhooks {
		return nil, "", invalid("at most %d webhooks", MaxWebhooks)
	}
	now := s.now()
	hosts, formats := []string{}, []string{}
	json := false
	for i, w := range in {
		if err := CheckWebhookURL(w.URL); err != nil {
			return nil, "", err
		}
		if !w.Format.Valid() {
			return nil, "", invalid("webhook %d: format %q: want json, slack or ntfy", i+1, w.Format)
		}
		u, _ := url.Parse(strings.TrimSpace(w.URL))
		hosts, formats = append(hosts, u.Host), append(formats, string(w.Format))
		json = json || w.Format == brabo.FormatJSON
		hooks = append(hooks, &brabo.Webhook{ID: brabo.NewID("whk"), ProjectID: projectID, URL: u.String(), Format: w.Format,
			Details: w.Details, CreatedBy: m.ID, CreatedAt: now.Add(timeStep(i))})
	}
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.SetWebhooks(ctx, projectID, hooks); err != nil {
			return err
		}
		if json {
			_, err := tx.WebhookSecret(ctx, projectID)
			if errors.Is(err, brabo.ErrNotFound) {
				newSecret = newWebhookSecret()
				if err := tx.SetWebhookSecret(ctx, projectID, newSecret, now); err != nil {
					return err
				}
			} else if err != nil {
				return err
			}
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: projectID, Type: brabo.EventWebhooksChanged, ActorID: m.ID,
			Payload: mustJSON(map[string]any{"hosts": hosts, "formats": formats, "secretCreated": newSecret != ""}), CreatedAt: now})
	})
	if err != nil {
		return nil, "", err
	}
	return hooks, newSecret, nil
}

// RotateWebhookSecret gives the project a new signing secret, returned
// this once; messages are signed with it from now on.
func (s *Service) RotateWebhookSecret(ctx context.Context, projectID string, m *brabo.Member) (string, error) {
	secret := newWebhookSecret()
	now := s.now()
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.SetWebhookSecret(ctx, projectID, secret, now); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: projectID, Type: brabo.EventWebhooksChanged, ActorID: m.ID,
			Payload: mustJSON(map[string]any{"secretRotated": true}), CreatedAt: now})
	})
	return secret, err
}

func newWebhookSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "whsec_" + hex.EncodeToString(b[:])
}

// timeStep keeps the webhooks in the order given: they are listed by
// their creation time.
func timeStep(i int) time.Duration { return time.Duration(i) * time.Millisecond }
