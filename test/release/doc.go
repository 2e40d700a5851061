// Package release checks the release configuration that CI can check on a
// machine without Docker or GoReleaser: .goreleaser.yaml against GoReleaser's
// own schema (goreleaser.schema.json, generated from its config types by
// ./schemagen), the two Dockerfiles against the image rules (multi-stage,
// static binary, non-root user, no shell, the state directory a volume),
// and, in ./crossbuild, every release target compiled as GoReleaser would
// (or, with -typecheck, as make test runs it, type-checked from source).
package release
