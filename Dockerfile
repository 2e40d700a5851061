# The switchboard container image, built from source: `docker build -t switchboard .`
# Stage 1 compiles a static binary; stage 2 is distroless (no shell, no package
# manager) and runs it as a non-root user, with the state directory as a volume.
# Releases build the same final stage around GoReleaser's binary
# (test/release/goreleaser.Dockerfile); `make release-check` keeps the two in step.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/switchboard-mcp/switchboard/internal/cli.Version=${VERSION}" -o /out/switchboard ./cmd/switchboard

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/switchboard /usr/local/bin/switchboard
# The state directory and /config, empty and owned by the non-root user (copied from the
# base image's home of that user: there is no shell to mkdir with).
COPY --from=gcr.io/distroless/static-debian12:nonroot --chown=65532:65532 /home/nonroot /var/lib/switchboard
COPY --from=gcr.io/distroless/static-debian12:nonroot --chown=65532:65532 /home/nonroot /config
ENV SWITCHBOARD_STATE_DIR=/var/lib/switchboard
VOLUME ["/var/lib/switchboard"]
WORKDIR /config
USER 65532:65532
EXPOSE 7777
ENTRYPOINT ["/usr/local/bin/switchboard"]
CMD ["serve"]
