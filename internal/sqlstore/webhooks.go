package sqlstore

import (
	"context"
	"time"

	"github.com/brabo-dev/brabo"
)

// Webhooks: where a project's notifications go, and the secret its json
// messages are signed with.

const webhookCols = `id, project_id, url, format, details, created_by, created_at`

func scanWebhook(r Row) (*brabo.Webhook, error) {
	h := &brabo.Webhook{}
	var created int64
	err := r.Scan(&h.ID, &h.ProjectID, &h.URL, &h.Format, &h.Details, &h.CreatedBy, &created)
	h.CreatedAt = time.UnixMicro(created).UTC()
	return h, err
}

// Webhooks lists the project's webhooks, oldest first (brabo.Tx).
func (t *Tx) Webhooks(ctx context.Context, projectID string) ([]*brabo.Webhook, error) {
	return queryAll(ctx, t.q, scanWebhook, `SELECT `+webhookCols+` FROM webhooks WHERE project_id = $1 ORDER BY created_at, id`, projectID)
}

// SetWebhooks replaces the project's webhooks (brabo.Tx).
func (t *Tx) SetWebhooks(ctx context.Context, projectID string, hooks []*brabo.Webhook) error {
	if _, err := t.q.Exec(ctx, `DELETE FROM webhooks WHERE project_id = $1`, projectID); err != nil {
		return err
	}
	for _, h := range hooks {
		if _, err := t.q.Exec(ctx, `INSERT INTO webhooks (`+webhookCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7)`,
			h.ID, projectID, h.URL, string(h.Format), h.Details, h.CreatedBy, h.CreatedAt.UnixMicro()); err != nil {
			return t.conflict(err, "webhook "+h.ID)
		}
	}
	return nil
}

// WebhookSecret reads the project's signing secret (brabo.Tx).
func (t *Tx) WebhookSecret(ctx context.Context, projectID string) (string, error) {
	var secret string
	err := t.q.QueryRow(ctx, `SELECT secret FROM webhook_secrets WHERE project_id = $1`, projectID).Scan(&secret)
	if err != nil {
		return "", t.notFound(err, "the webhook secret of project "+projectID)
	}
	return secret, nil
}

// SetWebhookSecret sets or replaces the project's signing secret
// (brabo.Tx).
func (t *Tx) SetWebhookSecret(ctx context.Context, projectID, secret string, at time.Time) error {
	_, err := t.q.Exec(ctx, `INSERT INTO webhook_secrets (project_id, secret, created_at) VALUES ($1,$2,$3)
		ON CONFLICT (project_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at`,
		projectID, secret, at.UnixMicro())
	return err
}
