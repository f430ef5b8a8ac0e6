package app

import (
	"fmt"

	"github.com/brabo-dev/brabo/docker"
	"github.com/brabo-dev/brabo/pipeline"
)

// applyContainers gives the pipeline its container engine. No connection
// is made: an engine that does not answer fails the action that needs it.
func applyContainers(cfg Config, svc *pipeline.Service) error {
	svc.ContainerImage = cfg.ContainerImage
	if cfg.ContainerEngine == "" {
		return nil
	}
	e, err := docker.New(cfg.ContainerEngine)
	if err != nil {
		return fmt.Errorf("--container-engine: %w", err)
	}
	svc.Containers = e
	return nil
}
