# The release image: the final stage of ../../Dockerfile around the binary GoReleaser built
# (dockers_v2 puts it at $TARGETPLATFORM/switchboard in the build context).
FROM gcr.io/distroless/static-debian12:nonroot
ARG TARGETPLATFORM
COPY $TARGETPLATFORM/switchboard /usr/local/bin/switchboard
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
