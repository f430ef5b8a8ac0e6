package policy

import "testing"

// The families of external effect the cap list gained with the egress proxy:
// infrastructure, container registries, package publishing, release tools
// and privilege tools. Each is capped in auto mode even when an allow
// pattern names it; its reading siblings still pass.
func TestCapFamilies(t *testing.T) {
	var rows []row
	for _, c := range []struct{ family, cmd, reason string }{
		{"infrastructure", "tofu apply -auto-approve", "cap: external-effect command tofu apply"},
		{"infrastructure", "tofu -chdir=infra destroy", "cap: external-effect command tofu destroy"},
		{"infrastructure", "tofu state rm aws_s3_bucket.x", "cap: external-effect command tofu state rm"},
		{"infrastructure", "terraform apply", "cap: external-effect command terraform apply"},
		{"infrastructure", "pulumi up --yes", "cap: external-effect command pulumi up"},
		{"infrastructure", "pulumi -C infra destroy", "cap: external-effect command pulumi destroy"},
		{"infrastructure", "pulumi --stack prod up", "cap: external-effect command pulumi up"},
		{"infrastructure", "kubectl apply -f k8s/", "cap: external-effect command kubectl apply"},
		{"infrastructure", "helm install r chart", "cap: external-effect command helm install"},
		{"container registry", "podman push registry.example/x:1", "cap: external-effect command podman push"},
		{"container registry", "podman --connection remote image push x", "cap: external-effect command podman image push"},
		{"container registry", "podman manifest push list docker://r/x", "cap: external-effect command podman manifest push"},
		{"container registry", "docker push registry.example/x:1", "cap: external-effect command docker push"},
		{"container registry", "skopeo copy docker://a/x docker://b/x", "cap: external-effect command skopeo copy"},
		{"container registry", "skopeo --override-arch arm64 copy oci:x docker://b/x", "cap: external-effect command skopeo copy"},
		{"container registry", "skopeo sync --src docker --dest docker a b", "cap: external-effect command skopeo sync"},
		{"container registry", "buildah push x docker://r/x", "cap: external-effect command buildah push"},
		{"container registry", "buildah --storage-driver vfs push x", "cap: external-effect command buildah push"},
		{"package publishing", "poetry publish --build", "cap: external-effect command poetry publish"},
		{"package publishing", "poetry -C pkg publish", "cap: external-effect command poetry publish"},
		{"package publishing", "twine upload dist/*", "cap: external-effect command twine upload"},
		{"package publishing", "cargo publish", "cap: external-effect command cargo publish"},
		{"package publishing", "gem push x-1.0.gem", "cap: external-effect command gem push"},
		{"package publishing", "gem yank x -v 1.0", "cap: external-effect command gem yank"},
		{"package publishing", "npm publish", "cap: external-effect command npm publish"},
		{"package publishing", "pnpm publish", "cap: external-effect command pnpm publish"},
		{"package publishing", "yarn npm publish", "cap: external-effect command yarn npm publish"},
		{"release tool", "gh release create v1", "cap: external-effect command gh release create"},
		{"release tool", "gh release upload v1 dist/x.tar.gz", "cap: external-effect command gh release upload"},
		{"release tool", "gh -R o/r release delete v1", "cap: external-effect command gh release delete"},
		{"release tool", "goreleaser release --clean", "cap: external-effect command goreleaser release"},
		{"release tool", "goreleaser publish", "cap: external-effect command goreleaser publish"},
		{"privilege tool", "sudo ls", "cap: privileged command sudo"},
		{"privilege tool", "doas ls", "cap: privileged command doas"},
		{"privilege tool", "su -c id", "cap: privileged command su"},
		{"privilege tool", "pkexec id", "cap: privileged command pkexec"},
		{"privilege tool", "run0 id", "cap: privileged command run0"},
	} {
		rows = append(rows, row{name: c.family + " in auto mode: " + c.cmd, auto: true, cmd: c.cmd, want: RA, reason: c.reason})
	}
	for _, c := range []struct{ cmd, reason string }{
		{"pulumi up", "cap: external-effect command pulumi up"},
		{"tofu apply", "cap: external-effect command tofu apply"},
		{"podman push x", "cap: external-effect command podman push"},
		{"twine upload dist/x", "cap: external-effect command twine upload"},
		{"goreleaser release", "cap: external-effect command goreleaser release"},
	} {
		rows = append(rows, row{name: "an allow rule does not lift the cap: " + c.cmd, allow: []string{"Terminal(" + c.cmd + ")"},
			cmd: c.cmd, want: RA, reason: c.reason})
	}
	for _, cmd := range []string{"tofu plan", "pulumi preview", "podman build -t x .", "podman images", "skopeo inspect docker://a/x",
		"buildah bud -t x .", "poetry install", "poetry build", "twine check dist/x", "gem build x.gemspec", "gh release list",
		"goreleaser check"} {
		rows = append(rows, row{name: "reading is not an external effect: " + cmd, auto: true, cmd: cmd, want: A})
	}
	runRowsLoose(t, rows)
}
