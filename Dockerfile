# guard: the guardrail control service, one binary.
#
#   docker build -t guard --build-arg VERSION=1.2.3 --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run -p 8000:8000 -v guard-data:/var/lib/guard \
#     -e GUARD_API_KEY_ENABLED=true -e GUARD_ADMIN_API_KEYS=change-me guard
#
# The build stage compiles with cgo (SQLite's C code, about a minute); the runtime stage is a slim Debian
# with the binary, a non-root user and a volume for the SQLite file. With DATABASE_URL=postgres://... the
# volume is unused. Authentication is off unless GUARD_API_KEY_ENABLED=true: the container listens on every
# interface (HOST=0.0.0.0), so guard logs a warning at start when it is off.
# The tests TestDeployDockerfile and TestDeployDockerfileBuild (examples/server/deploy_test.go) run the go build line below and
# check the paths, port and variables used here against the server.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=1 go build -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o /out/guard ./examples/server
RUN /out/guard version

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 guard \
 && useradd --system --uid 10001 --gid guard --home-dir /var/lib/guard --create-home guard
COPY --from=build /out/guard /usr/local/bin/guard
USER 10001:10001
WORKDIR /var/lib/guard
ENV HOST=0.0.0.0 \
    PORT=8000 \
    DATABASE_URL=/var/lib/guard/guard.db
VOLUME ["/var/lib/guard"]
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD curl -fsS "http://127.0.0.1:${PORT}/ready" >/dev/null || exit 1
ENTRYPOINT ["guard"]
CMD ["serve", "--migrate"]
