package main

import (
	"flag"
	"os"
)

// containerFlags are brabo serve's container engine settings: where the
// Docker Engine API answers (Docker, or Podman's compatible service) and
// the image a container_start that names none runs.
type containerFlags struct {
	engine string
	image  string
}

func (f *containerFlags) register(fl *flag.FlagSet) {
	fl.StringVar(&f.engine, "container-engine", os.Getenv("BRABO_CONTAINER_ENGINE"),
		"the Docker Engine API that runs the projects' containers: unix:///var/run/docker.sock, unix:///run/podman/podman.sock, tcp://host:port; empty fails container actions, saying so (env BRABO_CONTAINER_ENGINE)")
	fl.StringVar(&f.image, "container-image", os.Getenv("BRABO_CONTAINER_IMAGE"),
		"the image a container_start that names none runs (env BRABO_CONTAINER_IMAGE)")
}
